/**
 * Cloning a graph between two stores named by URL (a directory, a path or
 * `file://`, or `s3://bucket/prefix`), for the command line and embedded
 * callers: the stores opened, graph/clone.ts run between them, both closed.
 */
import { cloneGraph, type CloneProgress, type CloneReport } from '../graph/clone.js';
import { BranchgraphError } from '../model/errors.js';
import { openStore } from '../store/open-store.js';
import type { ObjectStore } from '../store/object-store.js';

export type { CloneReport } from '../graph/clone.js';

export async function cloneStores(a: {
  source: string;
  destination: string;
  width?: number | undefined;
  signal?: AbortSignal;
  progress?: CloneProgress;
}): Promise<CloneReport> {
  const [source, destination] = await Promise.all([storeAt(a.source), storeAt(a.destination)]);
  try {
    return await cloneGraph({
      source,
      destination,
      ...(a.width !== undefined ? { width: a.width } : {}),
      ...(a.signal !== undefined ? { signal: a.signal } : {}),
      ...(a.progress !== undefined ? { progress: a.progress } : {}),
    });
  } finally {
    await Promise.all([source.close?.(), destination.close?.()]);
  }
}

async function storeAt(url: string): Promise<ObjectStore> {
  if (/^https?:\/\//i.test(url))
    throw new BranchgraphError(
      'invalid_input',
      `${url}: clone copies between stores, a directory (a path or file://) or s3://bucket/prefix`,
    );
  return openStore(url);
}
