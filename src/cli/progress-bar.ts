/**
 * The CLI's progress bar for long operations: while a merge or load runs,
 * poll the operation the request named (`Operation-Id`) and draw rows done
 * of rows planned on standard error. On a terminal the bar redraws in
 * place; elsewhere (a log, a pipe, a test) a line is written each time the
 * bar moves by a tenth, and once at the end.
 */
import { isBranchgraphError } from '../model/errors.js';
import type { OperationDto } from '../service/long-operations.js';
import { newId } from '../model/new-id.js';

const WIDTH = 30;
const POLL_MS = 250;

/** One line of the bar: `merge f -> main [#######.......]  52% 52,000 of 100,000 rows`. */
export function renderBar(
  op: Pick<OperationDto, 'kind' | 'branch' | 'source' | 'rowsPlanned' | 'rowsDone' | 'state'> & { phase?: string | null },
): string {
  const fraction = op.rowsPlanned === 0 ? (op.state === 'running' ? 0 : 1) : Math.min(1, op.rowsDone / op.rowsPlanned);
  const filled = Math.round(fraction * WIDTH);
  const what = `${op.kind === 'merge' ? `merge ${op.source ?? '?'} -> ${op.branch}` : `load into ${op.branch}`}${op.phase != null ? ` (${op.phase})` : ''}`;
  const pct = `${Math.floor(fraction * 100)}%`.padStart(4);
  return `${what} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${pct} ${op.rowsDone.toLocaleString('en-US')} of ${op.rowsPlanned.toLocaleString('en-US')} rows`;
}

/**
 * Run `start` (given a fresh operation id) while drawing its progress on `write`; the result is
 * `start`'s. Polling failures are ignored: progress is a courtesy, never a reason to fail.
 */
export async function withProgress<T>(a: {
  get: (id: string) => Promise<OperationDto>;
  write: (text: string) => void;
  tty: boolean;
  start: (operationId: string) => Promise<T>;
}): Promise<T> {
  const { get, write, tty, start } = a;
  const id = newId();
  let shown = -1;
  let last = '';
  const draw = (op: OperationDto, final: boolean): void => {
    const line = renderBar(op);
    const tenth = op.rowsPlanned === 0 ? 0 : Math.floor((10 * op.rowsDone) / op.rowsPlanned);
    if (tty) {
      if (line !== last) write(`\r${line}${final ? '\n' : ''}`);
      else if (final) write('\n');
    } else if (final || tenth > shown) write(`${line}\n`);
    shown = tenth;
    last = line;
  };
  const poll = async (final: boolean): Promise<void> => {
    try {
      draw(await get(id), final);
    } catch (e) {
      if (!isBranchgraphError(e)) throw e;
    }
  };
  let running = true;
  const work = start(id).finally(() => {
    running = false;
  });
  const watcher = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      if (running) await poll(false);
    }
  })();
  try {
    return await work;
  } finally {
    await watcher;
    await poll(true);
  }
}
