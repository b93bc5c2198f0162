/**
 * Map over items with at most `limit` calls in flight, keeping result order.
 * After a call rejects no further item starts, and the returned promise
 * settles only once the calls in flight have: a caller that cleans up after
 * a failure (deleting the segments of a run it was writing) never races a
 * call that is still running.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return out;
}
