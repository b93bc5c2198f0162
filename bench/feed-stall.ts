/**
 * How long one kill -9 stalls the event feed. Two servers (shards a and b)
 * share a local directory, 20 ms per store call. Server a writes one-row
 * commits as fast as it can; after a moment it is killed with SIGKILL,
 * most often between appending an event and publishing its change. Server
 * b then makes a commit of its own, and the stall is the time until a feed
 * reader on b sees that commit. Server a writes to a branch of its own,
 * so nothing but its death decides an event it left undecided. A run is capped at 330 s (a publication's
 * deadline, the old bound, is 300 s).
 *
 *   npx tsx bench/feed-stall.ts [--runs N] [--code DIR]
 *
 * `--code` runs another checkout's servers (its `src/cli/main.ts`) with
 * the same workload, for a figure before and after a change.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const CAP_MS = 330_000;

function serve(code: string, dir: string, shard: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(code, 'src/cli/main.ts'),
      'serve',
      '--port',
      '0',
      '--store',
      `file://${dir}`,
      '--shard',
      shard,
      '--store-latency-ms',
      '20',
      '--log-level',
      'error',
    ],
    { cwd: code, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ child, url: m[1] as string });
    });
    child.once('exit', (c) => reject(new Error(`server ${shard} exited ${c}: ${err}`)));
  });
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function oneRun(code: string): Promise<{ stallMs: number; capped: boolean; writesBeforeKill: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-stall-'));
  const a = await serve(code, dir, 'a');
  await post(`${a.url}/branches/main/schema`, { schema: 'node P { id: string @key\n v: int }' });
  // a writes to a branch no one else writes: an event it leaves undecided is decided by nothing but its lease (or the deadline).
  await post(`${a.url}/branches`, { name: 'side' });
  const b = await serve(code, dir, 'b');
  let writes = 0;
  let stop = false;
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      // Several in flight, so the kill most often lands mid-publication.
      await Promise.all(
        [0, 1, 2, 3].map((k) =>
          post(`${a.url}/branches/side/writes`, { ops: [{ op: 'upsert', table: 'P', values: { id: `a${i}-${k}`, v: i } }] }).then(
            () => writes++,
            () => undefined,
          ),
        ),
      );
    }
  })();
  await new Promise((r) => setTimeout(r, 1500 + Math.random() * 1000));
  a.child.kill('SIGKILL');
  stop = true;
  await writer;
  const written = (await (
    await post(`${b.url}/branches/main/writes`, { ops: [{ op: 'upsert', table: 'P', values: { id: 'from-b', v: 1 } }] })
  ).json()) as {
    commit: { id: string };
  };
  const t0 = performance.now();
  let seen = false;
  while (!seen && performance.now() - t0 < CAP_MS) {
    let cursor = '0';
    for (;;) {
      const page = (await (await fetch(`${b.url}/events?cursor=${cursor}&limit=1000`)).json()) as {
        events: { commit?: string }[];
        nextCursor: string;
      };
      if (page.events.some((e) => e.commit === written.commit.id)) seen = true;
      if (page.events.length === 0 || seen) break;
      cursor = page.nextCursor;
    }
    if (!seen) await new Promise((r) => setTimeout(r, 250));
  }
  const stallMs = Math.round(performance.now() - t0);
  b.child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
  return { stallMs, capped: !seen, writesBeforeKill: writes };
}

const { values } = parseArgs({ options: { runs: { type: 'string' }, code: { type: 'string' } } });
const code = path.resolve(values.code ?? '.');
const runs = Number(values.runs ?? 5);
const stalls: number[] = [];
for (let r = 0; r < runs; r++) {
  const x = await oneRun(code);
  stalls.push(x.stallMs);
  process.stdout.write(`run ${r + 1}: stall ${x.stallMs} ms${x.capped ? ' (capped)' : ''} after ${x.writesBeforeKill} writes\n`);
}
const sorted = [...stalls].sort((x, y) => x - y);
process.stdout.write(
  `feed stall after kill -9 (${code}): median ${sorted[sorted.length >> 1]} ms, max ${sorted.at(-1)} ms over ${runs} runs\n`,
);
