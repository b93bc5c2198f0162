import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../model/errors.js';
import { loadConfig } from './config.js';

describe('configuration', () => {
  it('has working defaults: the embedded store in ./data on 127.0.0.1:8080, open access', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ store: 'file://./data', host: '127.0.0.1', port: 8080, mergeWidth: 1, budgetBytes: 128 * 1024 * 1024 });
    expect(c.tokens.size).toBe(0);
  });

  it('flags win over the environment', () => {
    expect(loadConfig({ PORT: '9000', BRANCHGRAPH_STORE: 'memory://' }, { port: '9001' })).toMatchObject({ port: 9001, store: 'memory://' });
  });

  it('lists every problem at once', () => {
    let err: BranchgraphError | undefined;
    try {
      loadConfig({ PORT: 'eighty', BRANCHGRAPH_STORE: 'ftp://x', BRANCHGRAPH_TOKENS: 'root:abc', LOG_LEVEL: 'loud', BRANCHGRAPH_MERGE_WIDTH: '3' });
    } catch (e) {
      err = e as BranchgraphError;
    }
    expect(err?.code).toBe('invalid_input');
    expect(err?.issues.map((i) => i.path)).toEqual([
      '--store / BRANCHGRAPH_STORE',
      '--tokens / BRANCHGRAPH_TOKENS',
      '--log-level / LOG_LEVEL',
      '--merge-width / BRANCHGRAPH_MERGE_WIDTH',
      '--port / PORT',
    ]);
  });
});
