/**
 * Reading runs ahead of their use: a lookup or a merge walk that will need
 * several small runs asks for them at once instead of one round trip after
 * another, within these bounds.
 */

/** Runs at most this big are read ahead when a lookup may need several runs. */
export const READ_AHEAD_RUN_BYTES = 64 * 1024;
/** The most bytes one lookup reads ahead. */
export const READ_AHEAD_BYTES = 1024 * 1024;

/** A read started ahead of its use: awaited again where it is used, which is where a failure surfaces. */
export function early<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}
