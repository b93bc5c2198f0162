/**
 * A bulk load: a load's operations (load-source.ts: NDJSON, CSV or Parquet)
 * planned as one all-or-nothing write of up to MAX_LOAD_ROWS operations.
 * Progress counts the rows through three phases: `parse` (the rows read,
 * so a watcher sees the size of the load early), `validate` and `write`.
 * Problems name the line or row the operation came from.
 */
import type { ProgressSink } from '../model/progress.js';
import { MAX_LOAD_ROWS } from './ndjson.js';
import { planWrite, type WriteSummary } from './write-batch.js';
import type { Embedder, TableReader } from './ports.js';
import type { RunAppender } from './append-run.js';
import type { Plan } from './change.js';
import type { LoadInput } from './load-source.js';

export function planLoad(request: {
  tables: TableReader;
  runs: RunAppender;
  input: LoadInput;
  progress?: ProgressSink | undefined;
  signal?: AbortSignal | undefined;
  embedder?: Embedder | undefined;
}): Plan<WriteSummary> {
  const { input, progress } = request;
  progress?.restart(input.rows, 'parse');
  progress?.advance(input.rows);
  return async (head) => {
    const { ops, name, wellFormed } = await input.operations(head.schema);
    const validated = (): void => {
      progress?.advance(ops.length);
      progress?.restart(ops.length, 'write');
    };
    progress?.restart(ops.length, 'validate');
    const plan = await planWrite({ ...request, head, ops, maxOps: MAX_LOAD_ROWS, validated, name, wellFormed });
    progress?.advance(ops.length);
    return plan;
  };
}
