/**
 * Tags: immutable names for commits, usable wherever a ref is (`tag:v1`).
 *
 * A tag is one create-only object, `tags/<name>.json`, naming the commit
 * and its manifest. It is never rewritten, so a tag means the same commit
 * to every reader, and creating a name that is taken fails as
 * `tag_exists`. Deleting a tag (admin) removes the name; the commit and
 * its history stay while a branch or another tag reaches them. GC treats
 * every tag as a root, like a branch head, so a tagged commit outlives its
 * branch.
 */
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { listAll } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { BRANCH_NAME_RE, decodeBranchSegment, encodeBranch } from './keys.js';
import { ManifestRefZ } from './manifest.js';
import type { EventLog } from './event-log.js';

export const TagRecordZ = z.object({
  format: z.literal(1),
  name: z.string(),
  commit: z.string(),
  manifest: ManifestRefZ,
  actor: z.string(),
  time: z.string(),
  message: z.string(),
});
export type TagRecord = z.infer<typeof TagRecordZ>;

export const TAGS_PREFIX = 'tags/';
const tagKey = (name: string): string => `${TAGS_PREFIX}${encodeBranch(name)}.json`;

/** The tag name in a tag object's key, or undefined for a key outside the layout. */
export function tagNameOfKey(key: string): string | undefined {
  const m = /^tags\/([^/]+)\.json$/.exec(key);
  return m === null ? undefined : decodeBranchSegment(m[1] as string);
}

export function validateTagName(name: string): void {
  if (!BRANCH_NAME_RE.test(name) || name.includes('..') || name.endsWith('/') || name.includes('//')) {
    throw new BranchgraphError(
      'invalid_input',
      `invalid tag name ${JSON.stringify(name)}: letters, digits, '.', '_', '-' and '/' separators, up to 200`,
      {
        issues: [{ path: 'name', message: 'invalid tag name' }],
      },
    );
  }
}

function tagExists(name: string): BranchgraphError {
  return new BranchgraphError('tag_exists', `tag ${name} already exists; tags never move`, { details: { tag: name } });
}

export class Tags {
  constructor(
    private readonly store: ObjectStore,
    private readonly events: EventLog,
  ) {}

  async get(name: string, signal?: AbortSignal): Promise<TagRecord> {
    validateTagName(name);
    try {
      return decodeJson(TagRecordZ, await this.store.get(tagKey(name), { signal }), tagKey(name));
    } catch (e) {
      if (isBranchgraphError(e, 'object_not_found'))
        throw new BranchgraphError('not_found', `tag ${name} does not exist`, { details: { tag: name } });
      throw e;
    }
  }

  /** Create a tag; a name already taken is `tag_exists`, whatever it points at. */
  async create(record: Omit<TagRecord, 'format'>, signal?: AbortSignal): Promise<TagRecord> {
    validateTagName(record.name);
    const full: TagRecord = { format: 1, ...record };
    const key = tagKey(record.name);
    const bytes = encodeJson(full);
    // The caller refused a taken name before any work (tagAt, refuseTaken). Two creators racing past
    // that check meet at the create-only write below, and the loser's event is voided (event-log.ts).
    try {
      const draft = { kind: 'tag_created' as const, actor: record.actor, tag: record.name, commit: record.commit };
      await this.events.around({ draft, key, bytes, signal }, () => this.store.putIfAbsent(key, bytes, { signal }));
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) throw tagExists(record.name);
      throw e;
    }
    return full;
  }

  /** `tag_exists` when `name` is taken; checked before any work a refusal would undo. */
  async refuseTaken(name: string, signal?: AbortSignal): Promise<void> {
    if ((await this.store.head(tagKey(name), { signal })) !== undefined) throw tagExists(name);
  }

  async delete(name: string, signal?: AbortSignal): Promise<void> {
    await this.get(name, signal);
    await this.store.deleteMany([tagKey(name)], { signal });
  }

  /** Every tag, and the tag objects that cannot be read (GC then deletes nothing). */
  async all(signal?: AbortSignal): Promise<{ tags: TagRecord[]; damaged: { key: string; error: string }[] }> {
    const tags: TagRecord[] = [];
    const damaged: { key: string; error: string }[] = [];
    const objects = (await listAll(this.store, TAGS_PREFIX, { signal })).filter((o) => tagNameOfKey(o.key) !== undefined);
    await Promise.all(
      objects.map(async (o) => {
        try {
          tags.push(decodeJson(TagRecordZ, await this.store.get(o.key, { signal }), o.key));
        } catch (e) {
          if (isBranchgraphError(e, 'object_not_found')) return;
          if (!isBranchgraphError(e, 'corrupt_object')) throw e;
          damaged.push({ key: o.key, error: (e as Error).message });
        }
      }),
    );
    return { tags: tags.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), damaged };
  }
}
