import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory-store.js';
import { runGqtCli, runGqtCase } from './gqt-cli.js';
import { openEmbeddedDriver } from './embedded-driver.js';
import { parseGqt } from './gqt-parser.js';
import { diffRows, runCase } from './gqt-runner.js';

const CASE = `case c
schema
  node P { id: string @key
    v: int }
end
seed P
  {"id": "a", "v": 1}
  {"id": "b", "v": 2}
end
`;

describe('GQT runner', () => {
  it('shows missing rows, extra rows and changed properties', () => {
    const d = diffRows(
      [
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
        { id: 'c', v: 3 },
      ],
      [
        { key: 'a', row: { id: 'a', v: 1 } },
        { key: 'b', row: { id: 'b', v: 5 } },
        { key: 'z', row: { id: 'z', v: 0 } },
      ],
      (r) => String(r.id),
    );
    expect(d).toBe(['  row b: v expected 2, got 5', '  missing row c: {"id":"c","v":3}', '  extra row z: {"id":"z","v":0}'].join('\n'));
    expect(diffRows([{ id: 'a' }], [{ key: 'a', row: { id: 'a' } }], (r) => String(r.id))).toBeUndefined();
  });

  it('fails a case at the first expectation that does not hold, naming the line', async () => {
    const c = parseGqt(`${CASE}expect table P at main\n  {"id": "a", "v": 1}\nend\nrestart\n`, 'c.gqt');
    const r = await runCase(c, await openEmbeddedDriver(() => new MemoryStore()));
    expect(r.passed).toBe(false);
    expect(r.failure).toBe('c.gqt:10: table P at main differs:\n  extra row b: {"id":"b","v":2}');
  });

  it('fails when an expected error does not happen, and when an unexpected one does', async () => {
    const store = new MemoryStore();
    const wrong = parseGqt(`${CASE}branch create f -> error branch_exists\n`, 'w.gqt');
    expect((await runCase(wrong, await openEmbeddedDriver(() => store))).failure).toBe(
      'w.gqt:10: expected error branch_exists, but the step succeeded',
    );
    const boom = parseGqt(`${CASE}write main\n  insert P {"id": "a", "v": 1}\nend\n`, 'b.gqt');
    expect((await runCase(boom, await openEmbeddedDriver(() => new MemoryStore()))).failure).toMatch(
      /^b.gqt:10: unexpected error constraint_violation/,
    );
  });

  it('refuses a memory store over HTTP, where a restart could not keep it', async () => {
    await expect(runGqtCase(parseGqt(CASE, 'c.gqt'), { via: 'rest', store: 'memory' })).rejects.toThrow(
      /memory store lives inside one process/,
    );
    await expect(runGqtCli({ via: 'rest', store: 'memory', files: [] })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
