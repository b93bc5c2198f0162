/**
 * A bulk load: NDJSON operations planned as one all-or-nothing write of up
 * to MAX_LOAD_ROWS operations. Progress counts the operations through three
 * phases: `parse` (lines, counted before parsing ends, so a watcher sees the
 * size of the load early), `validate` and `write`.
 */
import type { ProgressSink } from '../model/progress.js';
import { MAX_LOAD_ROWS, parseNdjson } from './ndjson.js';
import { planWrite, type WriteSummary } from './write-batch.js';
import type { Embedder, TableReader } from './ports.js';
import type { RunAppender } from './append-run.js';
import type { Plan } from './change.js';

export function planLoad(request: {
  tables: TableReader;
  runs: RunAppender;
  ndjson: string;
  progress?: ProgressSink | undefined;
  signal?: AbortSignal | undefined;
  embedder?: Embedder | undefined;
}): Plan<WriteSummary> {
  const { ndjson, progress } = request;
  let lines = 0;
  for (let at = ndjson.indexOf('\n'); at >= 0; at = ndjson.indexOf('\n', at + 1)) lines++;
  progress?.restart(lines + (ndjson.endsWith('\n') ? 0 : 1), 'parse');
  const ops = parseNdjson(ndjson);
  const validated = (): void => {
    progress?.advance(ops.length);
    progress?.restart(ops.length, 'write');
  };
  return async (head) => {
    progress?.restart(ops.length, 'validate');
    const plan = await planWrite({ ...request, head, ops, maxOps: MAX_LOAD_ROWS, validated });
    progress?.advance(ops.length);
    return plan;
  };
}
