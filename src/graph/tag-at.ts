/**
 * Creating a tag: it names the commit a ref resolves to, so a branch's
 * pending WAL rows are folded into a commit first, and the tag's text is
 * checked as a commit's is before anything is read or folded.
 */
import { BranchgraphError } from '../model/errors.js';
import { findInputProblem } from '../model/text.js';
import { validateTagName, type TagRecord, type Tags } from './tags.js';
import type { Heads, Publication } from './ports.js';
import type { Ref } from './snapshot.js';
import type { ChangeOptions } from './change.js';

export interface TagRequest extends ChangeOptions {
  name: string;
  from: Ref;
}

/** Name the commit `from` resolves to; tags never move (see tags.ts). */
export async function tagAt(
  parts: { heads: Heads; publication: Publication; tags: Tags; clock: () => number; actor: string },
  request: TagRequest,
): Promise<TagRecord> {
  const { name, from, ...opts } = request;
  validateTagName(name);
  const bad = findInputProblem({ actor: opts.actor, message: opts.message }, 'tag');
  if (bad !== undefined) throw new BranchgraphError('invalid_input', `${bad.path}: ${bad.message}`, { issues: [bad] });
  // A taken name is refused before a branch's pending rows are folded for it.
  await parts.tags.refuseTaken(name, opts.signal);
  const message = `fold pending WAL generations before tagging ${name}`;
  // A branch's head as the fold publishes it: a writer still ingesting never makes the tag give up.
  const at =
    'branch' in from
      ? await parts.publication.foldPendingNow({ ...opts, branch: from.branch, message })
      : await parts.heads.resolve(from, opts.signal);
  const time = new Date(parts.clock()).toISOString();
  const record = {
    name,
    commit: at.manifest.commit.id,
    manifest: at.ref,
    actor: opts.actor ?? parts.actor,
    time,
    message: opts.message ?? '',
  };
  return parts.tags.create(record, opts.signal);
}
