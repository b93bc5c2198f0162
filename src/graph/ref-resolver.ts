/**
 * Resolving the ref grammar (model/ref-grammar.ts) to commits.
 *
 * - A path's base: a branch's committed head (pending WAL rows are not a
 *   commit), a commit, a tag's commit, or the one commit an id prefix names.
 *   A prefix is listed from the commit index (`commits/<prefix>`); entries a
 *   lost publication race left behind are checked against their manifests,
 *   so only published commits count, and more than one is `ambiguous_ref`
 *   with the candidates.
 * - `name@{time}`: the branch's head at that time from its own history, by
 *   the store's clock. The record in effect is the newest one the store had
 *   by then (a record is a creation, deletion or reset); within its lineage,
 *   the newest version published by then, found by binary search over
 *   version numbers (versions are published in order), one HEAD each: the
 *   cost is the log of the lineage's length, not its length. Before the
 *   lineage's first version the branch stood at its fork point.
 * - `~n` follows first parents n times, one manifest read each; `^n` takes
 *   the n-th parent (a merge's second parent is its source). Only the commit
 *   a path ends at is made a snapshot (its schema and table views). A
 *   compaction re-lays a commit and adds none (manifest.ts `layout`); the
 *   `compact` commits older versions published are passed through, so a
 *   path names the same commit on graphs from before and after.
 * - `remote:<remote>/<branch>`: the manifest the tracking ref names, exactly
 *   (a re-laid head too), as the last fetch found it.
 * - A bare name that is no branch, but could be the start of a commit id,
 *   is read as a prefix.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { couldBeCommitPrefix, refPathText, type RefPath, type RefStep } from '../model/ref-grammar.js';
import type { ObjectStore } from '../store/object-store.js';
import { keys, seqOfBranchKey } from './keys.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { Repository } from './repository.js';
import type { Snapshot } from './snapshot.js';
import type { Tags } from './tags.js';
import type { Remotes } from './remotes.js';
import type { HeadOptions } from './ports.js';

/** What resolution reads through: the snapshot reader's own ways to a head, a commit or a manifest. */
export interface RefReads {
  branchHead(name: string, signal?: AbortSignal, opts?: HeadOptions): Promise<Snapshot>;
  commitSnapshot(commitId: string, signal?: AbortSignal): Promise<Snapshot>;
  snapshotAt(ref: ManifestRef, opts: { signal?: AbortSignal }): Promise<Snapshot>;
  readManifest(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest>;
}

/** Candidates a prefix lists before it is refused as ambiguous. */
const MAX_CANDIDATES = 10;

export class RefResolver {
  constructor(private readonly from: { repo: Repository; store: ObjectStore; tags: Tags; remotes: Remotes; reads: RefReads }) {}

  /** The commit a path names. */
  async resolve(path: RefPath, signal?: AbortSignal): Promise<Snapshot> {
    const base = await this.base(path, signal);
    if (path.steps.every((s) => s.n === 0)) return base;
    // Steps walk manifests; only the commit they end at is made a snapshot.
    const text = refPathText(path);
    let at = { ref: base.ref, manifest: base.manifest };
    for (const step of path.steps) at = await this.step({ at, step, text, signal });
    return this.from.reads.snapshotAt(at.ref, { signal });
  }

  /** A branch's head, or, when no branch has that name and it could start a commit id, that commit. */
  async branchOrPrefix(name: string, signal: AbortSignal | undefined, opts: HeadOptions = {}): Promise<Snapshot> {
    try {
      return await this.from.reads.branchHead(name, signal, opts);
    } catch (e) {
      const missing = isBranchgraphError(e, 'not_found') && (e.details as { branch?: string }).branch === name;
      if (!(missing && couldBeCommitPrefix(name))) throw e;
      // No commit starts so either: the answer is the branch's not_found.
      const id = await this.commitByPrefix(name, signal).catch((p: unknown) => {
        throw isBranchgraphError(p, 'not_found') ? e : p;
      });
      return this.from.reads.commitSnapshot(id, signal);
    }
  }

  private async base(path: RefPath, signal?: AbortSignal): Promise<Snapshot> {
    const { reads, tags } = this.from;
    const b = path.base;
    if ('commit' in b) return reads.commitSnapshot(b.commit, signal);
    if ('commitPrefix' in b) return reads.commitSnapshot(await this.commitByPrefix(b.commitPrefix, signal), signal);
    if ('tag' in b) return reads.commitSnapshot((await tags.get(b.tag, signal)).commit, signal);
    if ('remote' in b)
      return reads.snapshotAt((await this.from.remotes.trackingRef(b.remote, b.remoteBranch, signal)).manifest, { signal });
    if (path.asOf !== undefined) return reads.snapshotAt(await this.headAt(b.branch, path.asOf, signal), { signal });
    // A commit, not a head: the branch as committed, without pending rows and without its record.
    const head = await this.branchOrPrefix(b.branch, signal, { withoutPending: true });
    return head.branch === undefined ? head : reads.snapshotAt(head.ref, { signal });
  }

  private async step(s: {
    at: { ref: ManifestRef; manifest: Manifest };
    step: RefStep;
    text: string;
    signal?: AbortSignal | undefined;
  }): Promise<{ ref: ManifestRef; manifest: Manifest }> {
    const { step, text, signal } = s;
    let at = s.at;
    const go = async (ref: ManifestRef) => ({ ref, manifest: await this.from.reads.readManifest(ref, signal) });
    if (step.n === 0) return at;
    // Compactions published by older versions were commits; history passes through them as through layout.
    const past = async (x: { ref: ManifestRef; manifest: Manifest }) => {
      let y = x;
      while (y.manifest.commit.kind === 'compact' && y.manifest.commit.parents[0] !== undefined) y = await go(y.manifest.commit.parents[0]);
      return y;
    };
    at = await past(at);
    const parents = at.manifest.commit.parents;
    if (step.kind === 'parent') {
      const p = parents[step.n - 1];
      if (p === undefined) throw noSuchCommit(text, `commit ${at.manifest.commit.id} has ${parents.length} parent(s), not ${step.n}`);
      return past(await go(p));
    }
    for (let i = 0; i < step.n; i++) {
      const p = at.manifest.commit.parents[0];
      if (p === undefined) throw noSuchCommit(text, `commit ${at.manifest.commit.id} is the first; ~${step.n} goes back past it`);
      at = await past(await go(p));
    }
    return at;
  }

  /** The one published commit whose id starts with `prefix`. */
  private async commitByPrefix(prefix: string, signal?: AbortSignal): Promise<string> {
    const listed: string[] = [];
    for await (const o of this.from.store.list(keys.commitsStartingWith(prefix), { signal })) {
      listed.push(o.key.slice(keys.commitsStartingWith('').length).replace(/\.json$/, ''));
      if (listed.length > MAX_CANDIDATES) break;
    }
    const published = (
      await Promise.all(
        listed.map((id) =>
          this.from.reads.commitSnapshot(id, signal).then(
            () => id,
            (e: unknown) => {
              if (isBranchgraphError(e, 'not_found')) return undefined;
              throw e;
            },
          ),
        ),
      )
    ).filter((id): id is string => id !== undefined);
    if (published.length === 0)
      throw new BranchgraphError('not_found', `no commit id starts with ${prefix}`, { details: { commit: prefix } });
    if (published.length > 1) {
      const candidates = published.slice(0, MAX_CANDIDATES);
      throw new BranchgraphError(
        'ambiguous_ref',
        `${prefix} starts ${listed.length > MAX_CANDIDATES ? 'more than ten' : published.length} commit ids: ${candidates.join(', ')}`,
        {
          details: { prefix, candidates },
        },
      );
    }
    return published[0] as string;
  }

  /** Where branch `name` stood at `asOf`, by the store's clock. */
  private async headAt(name: string, asOf: string, signal?: AbortSignal): Promise<ManifestRef> {
    const { repo, store } = this.from;
    const t = Date.parse(asOf);
    let newest: { key: string; seq: number } | undefined;
    for await (const o of store.list(keys.branchPrefix(name), { signal })) {
      const seq = seqOfBranchKey(o.key);
      if (seq === undefined || o.lastModified === undefined || o.lastModified > t) continue;
      if (newest === undefined || seq > newest.seq) newest = { key: o.key, seq };
    }
    const gone = (why: string) => new BranchgraphError('not_found', `branch ${name} ${why} at ${asOf}`, { details: { branch: name } });
    if (newest === undefined) throw gone('did not exist yet');
    const rec = await repo.records.read(newest.key, signal);
    if (rec.deleted) throw gone('was deleted');
    const publishedAt = async (v: number): Promise<number> =>
      (await repo.versions.publishedAt({ lineage: rec.lineage, version: v }, signal)) ?? Number.POSITIVE_INFINITY;
    // The newest version published by then: versions of a lineage are published in order.
    let lo = 0;
    let hi = await repo.versions.latest(rec.lineage, signal);
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if ((await publishedAt(mid)) <= t) lo = mid;
      else hi = mid - 1;
    }
    if (lo > 0) return { lineage: rec.lineage, version: lo };
    if (rec.from === null) throw gone('had no commit yet');
    return rec.from;
  }
}

function noSuchCommit(text: string, why: string): BranchgraphError {
  return new BranchgraphError('not_found', `${text} names no commit: ${why}`);
}
