import { describe, expect, it } from 'vitest';
import type { BranchgraphError } from '../model/errors.js';
import { loadConfig } from './config.js';
import { openService } from './open-service.js';

describe('configuration', () => {
  it('has working defaults: the embedded store in ./data on 127.0.0.1:8080, open access', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ store: 'file://./data', host: '127.0.0.1', port: 8080, mergeWidth: 1, budgetBytes: 128 * 1024 * 1024 });
    expect(c.tokens.size).toBe(0);
  });

  it('flags win over the environment', () => {
    expect(loadConfig({ PORT: '9000', BRANCHGRAPH_STORE: 'memory://' }, { port: '9001' })).toMatchObject({
      port: 9001,
      store: 'memory://',
    });
  });

  it('lists every problem at once', () => {
    let err: BranchgraphError | undefined;
    try {
      loadConfig({
        PORT: 'eighty',
        BRANCHGRAPH_STORE: 'ftp://x',
        BRANCHGRAPH_TOKENS: 'root:abc',
        LOG_LEVEL: 'loud',
        BRANCHGRAPH_MERGE_WIDTH: '3',
      });
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

  it('reads the WAL and catch-up settings, and refuses bad ones by name', () => {
    const c = loadConfig({
      BRANCHGRAPH_SHARD: 'writer-1',
      CATCHUP_PIPELINE_ENABLED: 'false',
      CATCHUP_MERGE_MAX_GENERATIONS: '8',
      CATCHUP_TRIGGER_GENERATIONS: '0',
    });
    expect(c.shard).toBe('writer-1');
    expect(c.catchUp).toEqual({
      pipeline: false,
      maxGenerations: 8,
      maxBytes: 64 * 1024 * 1024,
      budgetBytes: 256 * 1024 * 1024,
      triggerGenerations: 0,
      intervalMs: 1000,
    });
    expect(loadConfig({}).catchUp).toMatchObject({ pipeline: true, maxGenerations: 64 });
    expect(loadConfig({ CATCHUP_MERGE_MAX_GENERATIONS: '0' }).catchUp.maxGenerations).toBe(0);
    let err: BranchgraphError | undefined;
    try {
      loadConfig({ BRANCHGRAPH_SHARD: '../etc', CATCHUP_PIPELINE_ENABLED: 'maybe', CATCHUP_MERGE_MAX_GENERATIONS: '-1' });
    } catch (e) {
      err = e as BranchgraphError;
    }
    expect(err?.issues.map((i) => i.path).sort()).toEqual([
      '--shard / BRANCHGRAPH_SHARD',
      'CATCHUP_MERGE_MAX_GENERATIONS',
      'CATCHUP_PIPELINE_ENABLED',
    ]);
  });
});

describe('inline compaction setting', () => {
  it('is on by default; COMPACTION_INLINE=false leaves every run to compaction, and the opened graph keeps one run per write', async () => {
    expect(loadConfig({}).compaction).toMatchObject({ background: true, inline: true });
    const off = loadConfig({ BRANCHGRAPH_STORE: 'memory://', COMPACTION_BACKGROUND: 'false', COMPACTION_INLINE: 'false' });
    expect(off.compaction.inline).toBe(false);
    expect(() => loadConfig({ COMPACTION_INLINE: 'sometimes' })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    for (const [config, folds] of [
      [off, false],
      [loadConfig({ BRANCHGRAPH_STORE: 'memory://', COMPACTION_BACKGROUND: 'false' }), true],
    ] as const) {
      const service = await openService(config);
      await service.graph.applySchema('main', 'node T { id: string @key }');
      for (let i = 0; i < 12; i++) await service.graph.write('main', [{ op: 'insert', table: 'T', values: { id: `t${i}` } }]);
      const runs = (await service.graph.branchHead('main')).manifest.tables.T?.runs.length;
      if (folds) expect(runs).toBeLessThan(12);
      else expect(runs).toBe(12);
      await service.close();
    }
  });
});
