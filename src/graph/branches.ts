/**
 * Branch records: a page of live branches with their heads, creating a
 * branch at any ref (a branch's pending WAL rows are folded first, so the
 * fork point holds exactly what its readers saw), and deleting one (a
 * damaged record too). Records are create-only and sequence-numbered, so
 * racing creators and deleters retry against the newest record.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { Commit, ManifestRef } from './manifest.js';
import { validateBranchName } from './branch-records.js';
import { traitsOf, type BranchRecord, type BranchTraits, type DamagedBranch } from './branch-record.js';
import { type Repository } from './repository.js';
import { keys } from './keys.js';
import type { BranchHints } from './branch-hints.js';
import type { Heads, Publication } from './ports.js';
import type { Ref, Snapshot } from './snapshot.js';
import { MAX_PUBLISH_ATTEMPTS, type ChangeOptions } from './change.js';
import { protectionVerdict, type GuardedChange, type ProtectionPass, type ProtectionRule } from '../model/branch-protection.js';
import { newId } from '../model/new-id.js';

/** A live branch as a listing shows it. */
export interface ListedBranch {
  record: BranchRecord;
  head: ManifestRef;
  commit: Commit;
}

/** Which live branches a page holds: names after `after` and starting with `prefix`, those `keep` keeps, at most `limit`. */
export interface BranchPageQuery {
  after?: string;
  limit?: number;
  prefix?: string;
  keep?: (rec: BranchRecord) => boolean;
  signal?: AbortSignal;
}

export interface BranchParts {
  repo: Repository;
  heads: Heads;
  publication: Publication;
  hints: BranchHints;
  clock: () => number;
  actor: string;
}

export class Branches {
  constructor(private readonly parts: BranchParts) {}

  /** One page of live branches by name, after `after` (see `BranchRecords.page`); `next` names the last one when more follow. */
  async list(page: BranchPageQuery = {}): Promise<{ branches: ListedBranch[]; damaged: DamagedBranch[]; next: string | undefined }> {
    const { repo } = this.parts;
    const { signal } = page;
    const { records, damaged, next } = await repo.records.page({ ...page, limit: page.limit ?? Number.MAX_SAFE_INTEGER });
    const branches: ListedBranch[] = [];
    await Promise.all(
      records.map(async (record) => {
        try {
          const head = await repo.versions.headRef(record, signal);
          branches.push({ record, head, commit: (await repo.manifests.read(head, signal)).commit });
        } catch (e) {
          if (!isBranchgraphError(e, 'corrupt_object') && !isBranchgraphError(e, 'not_found')) throw e;
          damaged.push({ name: record.name, key: keys.branchRecord(record.name, record.seq), error: (e as Error).message });
        }
      }),
    );
    const order = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
    return {
      branches: branches.sort((a, b) => order(a.record.name, b.record.name)),
      damaged: damaged.sort((a, b) => order(a.name, b.name)),
      next,
    };
  }

  async create(
    name: string,
    from: Ref,
    opts: ChangeOptions & { traits?: BranchTraits } = {},
  ): Promise<{ record: BranchRecord; head: Snapshot }> {
    const { repo, heads, publication } = this.parts;
    validateBranchName(name);
    let base = await heads.resolve(from, opts.signal);
    for (let attempt = 0; attempt < MAX_PUBLISH_ATTEMPTS; attempt++) {
      const existing = await repo.records.newest(name, opts.signal);
      if (existing !== undefined && !existing.deleted)
        throw new BranchgraphError('branch_exists', `branch ${name} already exists`, { details: { branch: name } });
      // Pending generations belong to the source's lineage: fold them there (whatever is pending when the fold
      // publishes, so a writer still ingesting never makes the creation give up) so the new branch starts from
      // what readers of the source saw.
      if ('branch' in from)
        base = await publication.foldPendingNow({
          ...opts,
          branch: from.branch,
          message: `fold pending WAL generations before branching ${name}`,
        });
      const res = await this.startLineage({
        name,
        from: base.ref,
        after: existing?.seq ?? 0,
        opts,
        carried: traitsOf(opts.traits ?? {}),
        event: 'branch_created',
      });
      if (res !== 'lost') {
        this.parts.hints.write(repo, res, base.manifest);
        return { record: res, head: { ...base, branch: res } };
      }
    }
    throw new BranchgraphError('publish_contention', `branch ${name} is being changed concurrently; retry`);
  }

  /**
   * Move a branch to any commit: the branch's next record starts a new lineage at `to`, as a branch
   * created there would, so later writes build on `to`. The old head stays where it was published
   * (readable as `name@{time}`, and kept by GC for its grace). `expectedHead` must be the head now;
   * pending WAL rows are folded into the old lineage first, so nothing acknowledged leaves with it.
   */
  async reset(name: string, to: Ref, opts: ChangeOptions & { expectedHead: string }): Promise<{ record: BranchRecord; head: Snapshot }> {
    const { repo, heads, publication } = this.parts;
    validateBranchName(name);
    const target = await heads.resolve(to, opts.signal);
    for (let attempt = 0; attempt < MAX_PUBLISH_ATTEMPTS; attempt++) {
      const current = await heads.branchHead(name, opts.signal);
      // Refused before the fold: a refused reset changes nothing.
      refuseProtected(current.branch, 'reset', opts.protection);
      refuseMoved(name, current, opts.expectedHead);
      const head = await publication.foldExactly({
        ...opts,
        branch: name,
        head: current,
        message: `fold pending WAL generations before resetting ${name}`,
      });
      const rec = head.branch ?? (await repo.records.live(name, opts.signal));
      refuseProtected(rec, 'reset', opts.protection);
      const res = await this.startLineage({
        name,
        from: target.ref,
        after: rec.seq,
        opts,
        carried: { ...traitsOf(rec), ...(rec.protection !== undefined ? { protection: rec.protection } : {}) },
        event: 'branch_reset',
      });
      if (res !== 'lost') {
        this.parts.hints.write(repo, res, target.manifest);
        return { record: res, head: { ...target, branch: res } };
      }
    }
    throw new BranchgraphError('publish_contention', `branch ${name} is being changed concurrently; retry`);
  }

  /**
   * The branch's next record after seq `after`, on a new lineage forked at `from` (or `lost` to a
   * racer), with what it `carried`: a creation's traits, or all a reset keeps (protection and traits).
   */
  private startLineage(a: {
    name: string;
    from: ManifestRef;
    after: number;
    opts: ChangeOptions;
    carried: BranchTraits & Pick<BranchRecord, 'protection'>;
    event: 'branch_created' | 'branch_reset';
  }): Promise<BranchRecord | 'lost'> {
    const { repo, clock } = this.parts;
    const time = new Date(clock()).toISOString();
    const rec = { name: a.name, lineage: newId(clock()), deleted: false, from: a.from, time, actor: a.opts.actor ?? this.parts.actor };
    return repo.records.write({ ...rec, ...a.carried }, a.after, {
      event: a.event,
      signal: a.opts.signal,
    });
  }

  /**
   * Set or remove (null) the branch's protection: its next record, on the same lineage. Changes
   * planned after it land under the new rule; one already publishing when it lands may still
   * finish under the old one (see docs/operations.md).
   */
  async protect(name: string, rule: ProtectionRule | null, opts: ChangeOptions = {}): Promise<BranchRecord> {
    const { repo, clock } = this.parts;
    validateBranchName(name);
    for (let attempt = 0; attempt < MAX_PUBLISH_ATTEMPTS; attempt++) {
      const { format: _f, seq, protection: _old, ...rec } = await repo.records.live(name, opts.signal);
      const time = new Date(clock()).toISOString();
      // The record keeps the branch's creation time (clients read it as createdAt); the rule says when it was set.
      const next = { ...rec, actor: opts.actor ?? this.parts.actor };
      const event = rule === null ? ('branch_unprotected' as const) : ('branch_protected' as const);
      const res = await repo.records.write(rule === null ? next : { ...next, protection: { ...rule, setBy: next.actor, time } }, seq, {
        event,
        signal: opts.signal,
      });
      if (res !== 'lost') return res;
    }
    throw new BranchgraphError('publish_contention', `branch ${name} is being changed concurrently; retry`);
  }

  async delete(name: string, opts: ChangeOptions = {}): Promise<BranchRecord> {
    return (await this.remove(name, opts)) as BranchRecord;
  }

  /**
   * Delete an expired branch: only the very record found expired, so a branch whose record changed
   * since (a new expiry, a reset, a protection) is left as it is, and the answer is `changed`.
   */
  expire(expired: BranchRecord, opts: ChangeOptions = {}): Promise<BranchRecord | 'changed'> {
    return this.remove(expired.name, { ...opts, expiring: expired });
  }

  private async remove(name: string, opts: ChangeOptions & { expiring?: BranchRecord }): Promise<BranchRecord | 'changed'> {
    const { repo, clock } = this.parts;
    validateBranchName(name);
    if (name === 'main') throw new BranchgraphError('branch_protected', 'main cannot be deleted', { details: { branch: name } });
    for (let attempt = 0; attempt < MAX_PUBLISH_ATTEMPTS; attempt++) {
      // A branch whose newest record is unreadable is deleted above it; its lineage is unknown, so the
      // deletion names none, and GC treats that lineage's objects like any no live branch uses.
      const damaged = opts.expiring === undefined ? await repo.records.damaged(name, opts.signal) : undefined;
      const rec = damaged === undefined ? await repo.records.live(name, opts.signal) : { lineage: '', from: null, seq: damaged.seq };
      if (opts.expiring !== undefined && (rec.seq !== opts.expiring.seq || (rec as BranchRecord).protection !== undefined))
        return 'changed';
      if (damaged === undefined) refuseProtected(rec as BranchRecord, 'delete', opts.protection);
      const res = await repo.records.write(
        {
          name,
          lineage: rec.lineage,
          deleted: true,
          from: rec.from,
          time: new Date(clock()).toISOString(),
          actor: opts.actor ?? this.parts.actor,
        },
        rec.seq,
        { event: opts.expiring === undefined ? 'branch_deleted' : 'branch_expired', signal: opts.signal },
      );
      if (res !== 'lost') return res;
    }
    throw new BranchgraphError('publish_contention', `branch ${name} is being changed concurrently; retry`);
  }
}

/** Refuse `change` with `branch_protected` when the branch's rule forbids it. */
export function refuseProtected(rec: BranchRecord | undefined, change: GuardedChange, pass: ProtectionPass | undefined): void {
  if (rec?.protection === undefined) return;
  const v = protectionVerdict({ branch: rec.name, rule: rec.protection, change, pass });
  if (!v.allowed) throw new BranchgraphError('branch_protected', v.reason, { details: { branch: rec.name } });
}

/**
 * Refuse a reset whose caller expected another head. Checked before the fold of pending rows, which
 * only continues the commit the caller read (graph/head-state.ts): a fold never defeats the expected
 * head, and a refused reset publishes nothing.
 */
function refuseMoved(name: string, current: Snapshot, expected: string): void {
  const id = current.manifest.commit.id;
  if (id === expected) return;
  throw new BranchgraphError('head_moved', `branch ${name} is at ${id}, not ${expected}`, {
    details: { branch: name, expected, actual: id },
  });
}
