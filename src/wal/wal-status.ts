/**
 * What an operator needs to see of a branch's WAL: per shard, the folded
 * watermark and what is still pending (generations, rows per table, the
 * oldest pending stamp).
 */
import type { Heads } from '../graph/ports.js';
import type { BranchRecord } from '../graph/branch-record.js';
import { watermarksFor } from '../pending/pending-wal.js';

export interface ShardStatus {
  shard: string;
  watermark: number;
  pendingGenerations: number;
  pendingRows: Record<string, number>;
  pendingBytes: number;
  oldestPendingStamp: string | null;
}

export interface WalStatus {
  branch: string;
  head: string;
  pendingGenerations: number;
  shards: ShardStatus[];
}

export async function walStatus(heads: Heads, branch: string, signal?: AbortSignal): Promise<WalStatus> {
  const head = await heads.branchHead(branch, signal);
  const marks = watermarksFor(head.manifest, (head.branch as BranchRecord).lineage);
  const shards = new Map<string, ShardStatus>();
  const shard = (name: string): ShardStatus => {
    let s = shards.get(name);
    if (s === undefined) {
      s = { shard: name, watermark: marks[name] ?? 0, pendingGenerations: 0, pendingRows: {}, pendingBytes: 0, oldestPendingStamp: null };
      shards.set(name, s);
    }
    return s;
  };
  for (const name of Object.keys(marks)) shard(name);
  for (const g of head.pending.generations) {
    const s = shard(g.shard);
    s.pendingGenerations++;
    s.pendingBytes += g.bytes;
    for (const [t, n] of Object.entries(g.rows ?? {})) s.pendingRows[t] = (s.pendingRows[t] ?? 0) + n;
    const at = new Date(g.stamp).toISOString();
    if (s.oldestPendingStamp === null || at < s.oldestPendingStamp) s.oldestPendingStamp = at;
  }
  return {
    branch,
    head: head.manifest.commit.id,
    pendingGenerations: head.pending.generations.length,
    shards: [...shards.values()].sort((a, b) => (a.shard < b.shard ? -1 : 1)),
  };
}
