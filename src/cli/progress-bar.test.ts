/**
 * The progress bar's drawing and its polling loop: redrawn in place on a
 * terminal, a line per tenth elsewhere, always the final state last, and
 * never a failure of the operation it follows.
 */
import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../model/errors.js';
import type { OperationDto } from '../service/long-operations.js';
import { renderBar, withProgress } from './progress-bar.js';

const op = (done: number, planned: number, state: OperationDto['state'] = 'running'): OperationDto => ({
  id: 'x',
  kind: 'merge',
  branch: 'main',
  source: 'f',
  startedAt: '2026-12-01T00:00:00.000Z',
  state,
  rowsPlanned: planned,
  rowsDone: done,
  phase: null,
});

describe('progress bar', () => {
  it('draws rows done of rows planned', () => {
    expect(renderBar(op(0, 200))).toBe('merge f -> main [..............................]   0% 0 of 200 rows');
    expect(renderBar(op(100, 200))).toBe('merge f -> main [###############...............]  50% 100 of 200 rows');
    expect(renderBar({ ...op(2500, 2500, 'succeeded'), kind: 'load' })).toBe(
      'load into main [##############################] 100% 2,500 of 2,500 rows',
    );
    // Nothing planned: empty while running, full once done (a fast-forward walks no rows).
    expect(renderBar(op(0, 0, 'succeeded'))).toContain('100%');
  });

  it('polls while the operation runs, ends with its final state, and ignores lookups that fail', async () => {
    let done = 0;
    const lines: string[] = [];
    const get = async (): Promise<OperationDto> => {
      if (done === 0) throw new BranchgraphError('not_found', 'not yet');
      return op(done, 1000, done === 1000 ? 'succeeded' : 'running');
    };
    const result = await withProgress({
      get,
      write: (t) => lines.push(t),
      tty: false,
      start: async (id) => {
        expect(id).toMatch(/^[0-9A-Z]{26}$/);
        for (const d of [0, 300, 300, 1000]) {
          done = d;
          await new Promise((r) => setTimeout(r, 300));
        }
        return 'merged';
      },
    });
    expect(result).toBe('merged');
    expect(lines.at(-1)).toBe(`${renderBar(op(1000, 1000, 'succeeded'))}\n`);
    // A line per tenth reached, not per poll.
    expect(lines.filter((l) => l.includes(' 30% '))).toHaveLength(1);
    const tty: string[] = [];
    await withProgress({
      get: async () => op(5, 10),
      write: (t) => tty.push(t),
      tty: true,
      start: async () => new Promise((r) => setTimeout(r, 300)),
    });
    expect(tty.every((t) => t.startsWith('\r') || t === '\n')).toBe(true);
    expect(tty.at(-1)?.endsWith('\n')).toBe(true);
  });
});
