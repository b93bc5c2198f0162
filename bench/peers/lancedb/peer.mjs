// LanceDB as a long-lived peer process for bench/search.ts: it loads the corpus once from files
// the benchmark wrote, then answers one JSON command per stdin line with one JSON line, timing
// each query inside this process (what a LanceDB user's process would see, without our pipe).
//
//   node bench/peers/lancedb/peer.mjs DIR
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import * as lancedb from '@lancedb/lancedb';

const dir = process.argv[2];
let table;

const commands = {
  async load({ meta, vectors, dims }) {
    const docs = JSON.parse(readFileSync(meta, 'utf8'));
    const bytes = readFileSync(vectors);
    const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    const rows = docs.map((d, i) => ({ id: d.id, text: d.text, vector: Array.from(all.subarray(i * dims, (i + 1) * dims)) }));
    const started = performance.now();
    const db = await lancedb.connect(dir);
    table = await db.createTable('docs', rows, { mode: 'overwrite' });
    return { ms: performance.now() - started };
  },
  async index() {
    const started = performance.now();
    await table.createIndex('text', { config: lancedb.Index.fts({ withPosition: false, stem: true, language: 'English' }) });
    return { ms: performance.now() - started };
  },
  async fts({ q, k }) {
    const started = performance.now();
    const hits = await table.query().fullTextSearch(q).select(['id']).limit(k).toArray();
    return { ms: performance.now() - started, ids: hits.map((h) => h.id) };
  },
  async knn({ vector, k }) {
    const started = performance.now();
    const hits = await table.query().nearestTo(vector).distanceType('cosine').select(['id']).limit(k).toArray();
    return { ms: performance.now() - started, ids: hits.map((h) => h.id) };
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const { cmd, ...args } = JSON.parse(line);
  try {
    process.stdout.write(`${JSON.stringify(await commands[cmd](args))}\n`);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ error: String(e?.message ?? e) })}\n`);
  }
}
