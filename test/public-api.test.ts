/**
 * The embedded API's export list, pinned: adding or removing an export is a
 * deliberate change to this test (and to the version), never an accident.
 */
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('public API', () => {
  it('exports exactly the documented values', () => {
    expect(Object.keys(api).sort()).toEqual([
      'BranchgraphError',
      'BranchgraphService',
      'CONFLICT_KINDS',
      'ERROR_CODES',
      'FsStore',
      'GraphHost',
      'LIMITS',
      'MemoryStore',
      'PrefixStore',
      'RestClient',
      'allRows',
      'embeddedApi',
      'formatSchema',
      'isBranchgraphError',
      'loadConfig',
      'openGraphHost',
      'openService',
      'openStore',
      'parseRef',
      'parseSchema',
      'serviceOnStore',
      'startServer',
    ]);
  });

  it('runs the documented embedded round: schema, branch, write, merge', async () => {
    const service = await api.serviceOnStore(new api.MemoryStore(), { actor: 'me', shard: 'me' });
    const ctx = { transport: 'embedded' as const };
    await service.applySchema('main', { schema: 'node Person { id: string @key\n name: string }' }, ctx);
    await service.createBranch('feature', { branch: 'main' }, ctx);
    await service.write('feature', { ops: [{ op: 'insert', table: 'Person', values: { id: 'a', name: 'Ann' } }] }, ctx);
    const r = await service.mergeBranch('feature', { into: 'main' }, ctx);
    expect(r.status === 'success' && r.outcome).toBe('fast_forward');
    expect((await service.scan({ branch: 'main' }, 'Person', {}, ctx)).items).toEqual([{ key: 'a', row: { id: 'a', name: 'Ann' } }]);
    // The same service as the one API every transport speaks.
    const bound = api.embeddedApi(service, ctx);
    expect(await api.allRows(bound, 'Person', { branch: 'main' })).toEqual([{ key: 'a', row: { id: 'a', name: 'Ann' } }]);
    await service.close();
  });
});

describe('the built package', () => {
  it('imports by its name from built JavaScript, with the same exports', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    // The suite's global setup built dist/; Node resolves the package's own name through its exports map.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', "import('branchgraph').then((m) => console.log(Object.keys(m).sort().join(',')))"]);
    expect(stdout.trim()).toBe(Object.keys(api).sort().join(','));
  });
});
