/**
 * Large requests and answers over HTTP: a body of a few megabytes is read, parsed and answered a
 * piece at a time (model/json-parse-steps.ts, model/json-steps.ts), and what a client sees must be
 * exactly what a whole-body parse and a whole-answer `JSON.stringify` would give: the same rows
 * written, the same refusals, the same bytes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { listAll } from '../src/store/object-store.js';
import { testServer, type TestServer } from './support/test-server.js';

const json = { 'content-type': 'application/json' };
// Three rows of 40 properties of 20 KB: a 2.4 MB body, past the size that is parsed in pieces.
const props = Array.from({ length: 40 }, (_, i) => `p${i}`);
const row = (id: string) => ({ id, ...Object.fromEntries(props.map((p, i) => [p, `${id}é${'x'.repeat(20_000 + i)}"\\`])) });
const rows = ['a', 'b', 'c'].map(row);

let s: TestServer;
beforeAll(async () => {
  s = await testServer({ maxBodyBytes: 8 * 1024 * 1024 });
  const schema = `node W { id: string @key\n${props.map((p) => `${p}: string?`).join('\n')} }`;
  const res = await fetch(`${s.url}/branches/main/schema`, { method: 'POST', headers: json, body: JSON.stringify({ schema }) });
  expect(res.status).toBe(200);
});
afterAll(() => s.close());

/** A request's answer: its status, its body's text, and whether its declared length is its length. */
async function send(path: string, init: RequestInit = {}): Promise<{ status: number; text: string; sized: boolean }> {
  const res = await fetch(`${s.url}${path}`, init);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const declared = res.headers.get('content-length');
  return { status: res.status, text: new TextDecoder().decode(bytes), sized: declared === null || Number(declared) === bytes.length };
}

const writeBody = (ids: string[]) => JSON.stringify({ ops: ids.map((id) => ({ op: 'upsert', table: 'W', values: row(id) })) });

describe('large request bodies and answers', () => {
  it('writes the rows of a large body, and reads them back as the exact JSON of the answer', async () => {
    const body = writeBody(['a', 'b', 'c']);
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
    const w = await send('/branches/main/writes', { method: 'POST', headers: json, body });
    expect(w.status).toBe(200);
    const read = await send('/tables/W/rows?limit=10', { headers: { 'accept-encoding': 'identity' } });
    expect(read.status).toBe(200);
    expect(read.sized).toBe(true);
    const answer = JSON.parse(read.text) as { items: { row: unknown }[] };
    expect(answer.items.map((i) => i.row)).toEqual(rows);
    // Byte for byte what one JSON.stringify of the answer gives.
    expect(read.text).toBe(JSON.stringify(answer));
    // Compressed, it is the same answer.
    const gz = await fetch(`${s.url}/tables/W/rows?limit=10`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(await gz.text()).toBe(read.text);
  });

  it('takes a large body without a declared length, as it comes', async () => {
    const bytes = new TextEncoder().encode(writeBody(['d']));
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let at = 0; at < bytes.length; at += 100_000) c.enqueue(bytes.subarray(at, at + 100_000));
        c.close();
      },
    });
    const w = await send('/branches/main/writes', { method: 'POST', headers: json, body: stream, duplex: 'half' } as RequestInit);
    expect(w.status).toBe(200);
    const one = await send('/tables/W/rows/d');
    expect((JSON.parse(one.text) as { row: unknown }).row).toEqual(row('d'));
  });

  it('refuses a large body that is not JSON or not UTF-8, naming which, and publishes nothing', async () => {
    await s.service.idle();
    const before = (await listAll(s.store, '')).map((o) => o.key);
    const good = new TextEncoder().encode(writeBody(['e', 'f']));
    const badUtf8 = good.slice();
    // Inside one of the values' text.
    badUtf8[good.indexOf(0x78, good.length >> 1)] = 0xff;
    const refused = async (body: Uint8Array) => {
      const r = await send('/branches/main/writes', { method: 'POST', headers: json, body: Buffer.from(body) });
      return [r.status, (JSON.parse(r.text) as { error: { code: string; message: string } }).error];
    };
    const error = (what: string) => expect.objectContaining({ code: 'invalid_input', message: `the request body is not valid ${what}` });
    expect(await refused(good.subarray(0, good.length - 3))).toEqual([400, error('JSON')]);
    expect(await refused(new TextEncoder().encode(`${writeBody(['e'])},`))).toEqual([400, error('JSON')]);
    expect(await refused(badUtf8)).toEqual([400, error('UTF-8')]);
    await s.service.idle();
    expect((await listAll(s.store, '')).map((o) => o.key)).toEqual(before);
  });

  it('answers a large typed GraphQL read as the exact JSON of its result', async () => {
    const query = `{ queryW(first: 10) { edges { node { id ${props.join(' ')} } } } }`;
    const r = await send('/branches/main/graphql', { method: 'POST', headers: json, body: JSON.stringify({ query }) });
    expect(r.status).toBe(200);
    expect(r.sized).toBe(true);
    expect(r.text.length).toBeGreaterThan(2 * 1024 * 1024);
    const answer = JSON.parse(r.text) as { data: { queryW: { edges: { node: { id: string } }[] } } };
    expect(r.text).toBe(JSON.stringify(answer));
    expect(answer.data.queryW.edges.map((e) => e.node.id).slice(0, 4)).toEqual(['a', 'b', 'c', 'd']);
    expect(answer.data.queryW.edges[0]?.node).toEqual(row('a'));
  });

  it('exports large rows in batches of bytes, not of a row count: every row, in order, in each format', async () => {
    const nd = await send('/tables/W/export?format=ndjson');
    expect(nd.status).toBe(200);
    const lines = nd.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    expect(lines.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(lines[0]).toEqual(row('a'));
    const res = await fetch(`${s.url}/tables/W/export?format=arrow-stream`);
    const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    // About a megabyte of text a batch: these rows of 0.8 MB make one batch each.
    expect(table.batches.length).toBeGreaterThanOrEqual(2);
    expect(table.numRows).toBe(4);
    expect(table.getChild('p7')?.get(2)).toBe((row('c') as Record<string, string>).p7);
  });
});
