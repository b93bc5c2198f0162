/**
 * Revising a request: the heads are read once and the preview runs once,
 * before the request is written, never inside a retried write.
 *
 * An action reads the request, applies its own change to it (pure, and
 * where it refuses), prepares the revision the branches make now, adds
 * its own part on top of the revised request (a review, a merge marker),
 * and writes the result as the version after the one it read. If another
 * writer got there first, the action starts over from the request as it
 * now is: a rare race, and the only time a head is read twice.
 *
 * A revision is appended only when it would differ: unmoved heads and
 * unchanged resolutions make the same merge, so no preview runs for them,
 * and a preview whose heads and fingerprint match the latest revision's
 * adds nothing.
 */
import { canonicalJson } from '../../model/canonical.js';
import { BranchgraphError, isBranchgraphError } from '../../model/errors.js';
import { MAX_REVISIONS, pinnedBy, pinsHeads, type MergeRequestDoc, type Revision } from '../../model/merge-request.js';
import type { RequestContext } from '../request-context.js';
import { readHeads, type RequestHeads } from './request-heads.js';
import type { ReviewPorts } from './review-ports.js';
import { previewRevision } from './revision-preview.js';

/** What revising found: the heads as read, and the revision to append (none when the latest still holds). */
export interface Prepared {
  heads: RequestHeads | undefined;
  revision?: Omit<Revision, 'n'>;
}

/** Branch moves between reading the heads and previewing that are read through before giving up. */
const PREVIEW_ATTEMPTS = 5;
/** Writers that get in first before an action gives up. */
const WRITE_ATTEMPTS = 20;

const sameResolutions = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/** Read both heads and, unless the latest revision pins them with these resolutions, preview the merge once. */
export async function prepareRevision(ports: ReviewPorts, doc: MergeRequestDoc, ctx: RequestContext): Promise<Prepared> {
  if (doc.state !== 'open') return { heads: undefined };
  const latest = doc.revisions.at(-1);
  for (let attempt = 0; ; attempt++) {
    const heads = await readHeads(ports, doc, ctx.signal);
    if (heads === undefined)
      throw new BranchgraphError('not_found', `branch ${doc.source} or ${doc.target} no longer exists`, {
        details: { branch: doc.source },
      });
    if (latest !== undefined && pinsHeads(latest, heads) && sameResolutions(latest.resolutions, doc.resolutions)) return { heads };
    let revision: Omit<Revision, 'n'>;
    try {
      revision = await previewRevision(ports, { doc, heads }, ctx);
    } catch (e) {
      // A branch moved between the read and the preview: read both again.
      if (isBranchgraphError(e, 'head_moved') && attempt < PREVIEW_ATTEMPTS) continue;
      throw e;
    }
    const same =
      latest !== undefined &&
      pinsHeads(latest, pinnedBy(revision)) &&
      latest.fingerprint === revision.fingerprint &&
      sameResolutions(latest.resolutions, revision.resolutions);
    return same ? { heads } : { heads, revision };
  }
}

/** `doc` with the prepared revision appended, or `doc` itself when there is none. */
export function withRevision(doc: MergeRequestDoc, p: Prepared): MergeRequestDoc {
  if (p.revision === undefined) return doc;
  if (doc.revisions.length >= MAX_REVISIONS)
    throw new BranchgraphError('payload_too_large', `merge request ${doc.id} has ${MAX_REVISIONS} revisions: close it and open another`);
  return { ...doc, revisions: [...doc.revisions, { n: (doc.revisions.at(-1)?.n ?? 0) + 1, ...p.revision }] };
}

/** An action's own parts around the revision: before it (what the preview must see) and after it. */
export interface RevisedChange {
  /** The request's id. */
  id: string;
  /** Change the request before revising (refusing by throwing); the request itself when nothing changes. */
  before?: (doc: MergeRequestDoc) => MergeRequestDoc;
  /** Change the revised request (refusing by throwing). */
  after?: (doc: MergeRequestDoc) => MergeRequestDoc;
  /** The version already read, to start from without reading it again. */
  read?: MergeRequestDoc;
}

/** Apply an action to a request with its revision computed first, as described above: the request as stored, and the heads read. */
export async function updateRevised(
  ports: ReviewPorts,
  change: RevisedChange,
  ctx: RequestContext,
): Promise<{ doc: MergeRequestDoc; heads: RequestHeads | undefined }> {
  const { id } = change;
  let stored = change.read ?? (await ports.requests.get(id, ctx.signal));
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const changed = change.before?.(stored) ?? stored;
    const prepared = await prepareRevision(ports, changed, ctx);
    const revised = withRevision(changed, prepared);
    const next = change.after?.(revised) ?? revised;
    if (next === stored) return { doc: stored, heads: prepared.heads };
    const doc = await ports.requests.replace(stored, next, ctx.signal);
    if (doc !== undefined) return { doc, heads: prepared.heads };
    stored = await ports.requests.get(id, ctx.signal);
  }
  throw new BranchgraphError('publish_contention', `merge request ${id} is being changed concurrently; retry`);
}
