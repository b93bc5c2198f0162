import { execSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { localEmbedding } from '../src/model/local-embedder.js';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { FsStore } from '../src/store/fs-store.js';
import { searchTable } from '../src/graph/table-search.js';
const dump = execSync('apt-cache dumpavail', { maxBuffer: 1 << 30, encoding: 'utf8' });
const docs: { id: string; text: string }[] = [];
const seen = new Set<string>();
for (const st of dump.split('\n\n')) {
  const n = /^Package: (.+)$/m.exec(st)?.[1];
  const d = /^Description(?:-en)?: (.*(?:\n .*)*)/m.exec(st)?.[1];
  if (!n || !d || seen.has(n)) continue;
  seen.add(n);
  docs.push({ id: n, text: d });
}
docs.sort((a, b) => (a.id < b.id ? -1 : 1));
const N = Number(process.argv[2] ?? 10000);
const service = await serviceOnStore(new FsStore(mkdtempSync(path.join(tmpdir(), 'p-'))), {
  actor: 'b',
  shard: 'b',
  compaction: { background: false, delayMs: 0 },
});
const api = embeddedApi(service, { transport: 'embedded' });
await api.applySchema({
  branch: 'main',
  schema: 'node Pkg { id: string @key\n text: string @search(stem: english)\n emb: vector(384) @index(metric: cosine) }',
});
for (let at = 0; at < N; at += 10000)
  await api.write({
    branch: 'main',
    ops: docs
      .slice(at, Math.min(N, at + 10000))
      .map((d) => ({ op: 'insert' as const, table: 'Pkg', values: { id: d.id, text: d.text, emb: localEmbedding(d.text, 384) } })),
  });
await api.compact({ branch: 'main', mode: 'full' });
const qs = ['network monitoring', 'python library', 'web server', 'documentation files', 'development headers'];
for (const q of qs) await api.search({ table: 'Pkg', text: q });
const snap = await service.graph.branchHead('main');
const t =
  (label: string, f: () => Promise<unknown>, n = 200) =>
  async () => {
    const s = performance.now();
    for (let i = 0; i < n; i++) await f();
    console.log(label, ((performance.now() - s) / n).toFixed(3), 'ms');
  };
await t('api.search', () => api.search({ table: 'Pkg', text: qs[1] }))();
await t('searchTable pinned', () => searchTable({ tables: service.graph.ports.tables, snap, table: 'Pkg', ask: { text: qs[1] } }))();
await t('branchHead', () => service.graph.branchHead('main'))();
const v = localEmbedding('python library', 384);
await t('api.search vector', () => api.search({ table: 'Pkg', near: { vector: v } }), 20)();
await t(
  'searchTable vector pinned',
  () => searchTable({ tables: service.graph.ports.tables, snap, table: 'Pkg', ask: { near: { vector: v } } }),
  20,
)();
for (const q of [
  'network monitoring',
  'python library',
  'web server',
  'font',
  'documentation files',
  'development headers',
  'game',
  'kernel module',
]) {
  const s = performance.now();
  for (let i = 0; i < 50; i++) await api.search({ table: 'Pkg', text: q });
  console.log(q, ((performance.now() - s) / 50).toFixed(3));
}
const { Session } = await import('node:inspector/promises');
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.start');
for (let i = 0; i < 2000; i++) await api.search({ table: 'Pkg', text: qs[i % 5] });
const { profile } = await session.post('Profiler.stop');
const self = new Map<string, number>();
const byId = new Map(profile.nodes.map((n: any) => [n.id, n]));
const dt = profile.timeDeltas as number[];
const samples = profile.samples as number[];
for (let i = 0; i < samples.length; i++) {
  const n: any = byId.get(samples[i]);
  const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)[0]}:${n.callFrame.lineNumber}`;
  self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0));
}
console.log(
  [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 30)
    .map(([k, v]) => `${(v / 1000).toFixed(0)}ms ${k}`)
    .join('\n'),
);
