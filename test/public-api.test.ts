/**
 * The embedded API's export list, pinned: adding or removing an export is a
 * deliberate change to this test (and to the version), never an accident.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';
import { embeddedApi } from '../src/service/api.js';

/** Every name src/index.ts exports, with the file that declares or re-exports it. */
function exportedNames(): { name: string; file: string }[] {
  const index = readFileSync('src/index.ts', 'utf8');
  return [...index.matchAll(/export (?:type )?\{([^}]*)\} from '([^']+)'/g)].flatMap((m) =>
    (m[1] as string)
      .split(',')
      .map((n) => n.trim().replace(/^type /, ''))
      .filter((n) => n !== '')
      .map((name) => ({ name, file: path.join('src', (m[2] as string).replace(/\.js$/, '.ts')) })),
  );
}

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
      'OPERATIONS',
      'PrefixStore',
      'RestClient',
      'allRows',
      'attachHttpPeers',
      'attachTypedGraphql',
      'cloneStores',
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

  it('every export is declared under a doc comment', () => {
    const undocumented: string[] = [];
    for (const exported of exportedNames()) {
      let { file } = exported;
      const { name } = exported;
      let text = readFileSync(file, 'utf8');
      // A name a file only passes on is documented where it is declared.
      for (let hops = 0; hops < 3; hops++) {
        const passed = new RegExp(`export (?:type )?\\{[^}]*\\b${name}\\b[^}]*\\} from '([^']+)'`).exec(text);
        if (passed === null) break;
        file = path.join(path.dirname(file), (passed[1] as string).replace(/\.js$/, '.ts'));
        text = readFileSync(file, 'utf8');
      }
      const decl = new RegExp(`^export (?:abstract )?(?:async )?(?:class|interface|type|function|const) ${name}\\b`, 'm').exec(text);
      if (decl === null || !text.slice(0, decl.index).trimEnd().endsWith('*/')) undocumented.push(`${name} (${file})`);
    }
    expect(undocumented).toEqual([]);
  });

  it('runs the documented embedded round: schema, branch, write, merge', async () => {
    const service = await api.serviceOnStore(new api.MemoryStore(), { actor: 'me', shard: 'me' });
    const ctx = { transport: 'embedded' as const };
    await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: 'node Person { id: string @key\n name: string }' });
    await embeddedApi(service, ctx).createBranch({ name: 'feature', from: { branch: 'main' } });
    await embeddedApi(service, ctx).write({
      branch: 'feature',
      ops: [{ op: 'insert', table: 'Person', values: { id: 'a', name: 'Ann' } }],
    });
    const r = await embeddedApi(service, ctx).mergeBranch({ source: 'feature', into: 'main' });
    expect(r.status === 'success' && r.outcome).toBe('fast_forward');
    expect((await embeddedApi(service, ctx).rows({ table: 'Person', at: { branch: 'main' } })).items).toEqual([
      { key: 'a', row: { id: 'a', name: 'Ann' } },
    ]);
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
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--input-type=module',
      '-e',
      "import('branchgraph').then((m) => console.log(Object.keys(m).sort().join(',')))",
    ]);
    expect(stdout.trim()).toBe(Object.keys(api).sort().join(','));
  });
});
