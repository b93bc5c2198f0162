import { describe, expect, it } from 'vitest';
import { ndjsonStream } from './ndjson.js';

describe('NDJSON ingest stream', () => {
  const chunks = async function* (parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
    for (const p of parts) yield typeof p === 'string' ? new TextEncoder().encode(p) : p;
  };
  const collect = async (parts: (string | Uint8Array)[]) => {
    const out = [];
    for await (const op of ndjsonStream(chunks(parts))) out.push(op);
    return out;
  };

  it('splits lines across chunk boundaries, skips blank lines, defaults op to upsert', async () => {
    expect(await collect(['{"table":"P","val', 'ues":{"id":"é"}}\n\n', '{"op":"delete","table":"P","values":{"id":"b"}}'])).toEqual([
      { op: 'upsert', table: 'P', values: { id: 'é' } },
      { op: 'delete', table: 'P', values: { id: 'b' } },
    ]);
  });

  it('a bad line, bad UTF-8 or a broken body is a typed error naming where', async () => {
    await expect(collect(['{"table":"P","values":{}}\n', 'nope\n'])).rejects.toMatchObject({
      code: 'invalid_input',
      issues: [{ path: 'line 2' }],
    });
    await expect(collect([new Uint8Array([0x7b, 0xff, 0x0a])])).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(collect(['{"table":"P","values":{"id":"', new Uint8Array([0xc3])])).rejects.toMatchObject({ code: 'invalid_input' });
    const broken = async function* (): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('{"table":"P","values":{}}\n');
      throw new Error('socket hang up');
    };
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const op of ndjsonStream(broken())) seen.push(op);
      })(),
    ).rejects.toMatchObject({ code: 'aborted' });
    expect(seen).toHaveLength(1);
  });
});
