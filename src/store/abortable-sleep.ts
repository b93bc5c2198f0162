import { BranchgraphError } from '../model/errors.js';

/** Sleep `ms`, waking early with `aborted` when the signal fires. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new BranchgraphError('aborted', 'the operation was aborted'));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new BranchgraphError('aborted', 'the operation was aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
