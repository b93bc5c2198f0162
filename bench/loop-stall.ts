/**
 * How long one large but allowed request holds the event loop. A server
 * (memory store) answers, one at a time: a 15 MB write (15 rows of 1,000
 * properties of 1 KB), reading those rows back cold, applying a schema of
 * 1,503 tables, and the first typed GraphQL request after it (which builds
 * the typed schema). The figure per request is the event loop's largest
 * delay while it ran (perf_hooks, 5 ms resolution). Goal: ≤ 100 ms each.
 *
 *   npx tsx bench/loop-stall.ts
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { embeddedApi } from '../src/service/api.js';
import pino from 'pino';
import { startServer } from '../src/http/server.js';
import { loadConfig } from '../src/service/config.js';

const GOAL_MS = 100;
const delay = monitorEventLoopDelay({ resolution: 5 });

async function measure(name: string, run: () => Promise<unknown>): Promise<void> {
  delay.reset();
  delay.enable();
  const t0 = performance.now();
  await run();
  delay.disable();
  const held = Math.round(delay.max / 1e6);
  process.stdout.write(
    `${held <= GOAL_MS ? 'met   ' : 'missed'}  ${name.padEnd(40)} took ${Math.round(performance.now() - t0)} ms, held the loop ${held} ms (goal ≤ ${GOAL_MS})\n`,
  );
}

const s = await startServer(loadConfig({}, { store: 'memory://', port: '0' }), pino({ level: 'silent' }));
const api = embeddedApi(s.service, { transport: 'embedded' });
const props = Array.from({ length: 1000 }, (_, i) => `p${i}: string?`).join('\n');
const wide = `node W { id: string @key\n${props} }`;
await api.applySchema({ branch: 'main', schema: wide });
const value = 'x'.repeat(1000);
const row = (id: string) => Object.fromEntries([['id', id], ...Array.from({ length: 1000 }, (_, i) => [`p${i}`, value])]);
const body = JSON.stringify({ ops: Array.from({ length: 15 }, (_, i) => ({ op: 'upsert', table: 'W', values: row(`w${i}`) })) });
const json = { 'content-type': 'application/json' };
await measure('a 15 MB write (REST)', () =>
  fetch(`${s.url}/branches/main/writes`, { method: 'POST', headers: json, body }).then((r) => r.text()),
);
s.graph.dropCaches();
await measure('reading those rows back, cold (REST)', () => fetch(`${s.url}/tables/W/rows?limit=15`).then((r) => r.text()));
const many = `${wide}\n${Array.from({ length: 1502 }, (_, i) => `node T${i} { id: string @key\n v: int? }`).join('\n')}`;
await measure('applying a schema of 1,503 tables', () => api.applySchema({ branch: 'main', schema: many }));
const query = JSON.stringify({ query: '{ getT1(id: "x") { id } }' });
await measure('the first typed request after it', () =>
  fetch(`${s.url}/branches/main/graphql`, { method: 'POST', headers: json, body: query }).then((r) => r.text()),
);
await s.close();
