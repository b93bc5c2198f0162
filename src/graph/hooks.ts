/**
 * Registered hooks and their dead letters in the object store.
 *
 * A hook is one create-only object, `hooks/<id>.json` (model/hook.ts);
 * removing it deletes the object. Every process reads the registry when it
 * delivers, from a copy at most `refreshMs` old (and at once after a change
 * it made itself), so a hook registered through one server is called by
 * every server within that time without a list per event.
 *
 * A delivery that ran out of attempts, or that a full queue turned away, is
 * kept as a dead letter, `hook-dead-letters/<ulid>.json`, with the body it
 * would have sent and why it failed, for an admin to read. Dead letters
 * are named by time, so a page of them is one listing in order.
 *
 * Each server keeps, per hook, a delivery cursor,
 * `hook-cursors/<hook>/<shard>.json`: the event up to which every event it
 * appended and the hook wants was delivered or dead-lettered. A restarted
 * server offers again what lies past it (service/hook-dispatcher.ts).
 */
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { HookZ, type Hook } from '../model/hook.js';
import { getIfPresent, type ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { newId } from '../model/new-id.js';

export const HOOKS_PREFIX = 'hooks/';
export const DEAD_LETTERS_PREFIX = 'hook-dead-letters/';
const ID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const hookKey = (id: string): string => `${HOOKS_PREFIX}${id}.json`;
const letterKey = (id: string): string => `${DEAD_LETTERS_PREFIX}${id}.json`;
export const HOOK_CURSORS_PREFIX = 'hook-cursors/';
const cursorKey = (hook: string, shard: string): string => `${HOOK_CURSORS_PREFIX}${hook}/${encodeURIComponent(shard)}.json`;
const CursorZ = z.object({ format: z.literal(1), seq: z.number().int().min(0) });
/** The most hooks one graph may register: each is called for every event it wants. */
export const MAX_HOOKS = 100;

export const DeadLetterZ = z.object({
  format: z.literal(1),
  id: z.string(),
  hook: z.string(),
  url: z.string(),
  delivery: z.string(),
  event: z.string(),
  attempts: z.number().int().min(0),
  error: z.string(),
  time: z.string(),
  /** The JSON body the delivery would have carried. */
  body: z.string(),
});
export type DeadLetter = z.infer<typeof DeadLetterZ>;

/** The registry copy every view of one store shares in a process. */
interface Copy {
  cached?: { hooks: Hook[]; at: number } | undefined;
  loading?: Promise<Hook[]> | undefined;
}

export class HookStore {
  private readonly clock: () => number;
  /** How old a copy of the registry deliveries may use. */
  private readonly refreshMs: number;

  constructor(
    private readonly store: ObjectStore,
    private readonly opts: { clock: () => number; refreshMs?: number | undefined },
    private readonly copy: Copy = {},
  ) {
    this.clock = opts.clock;
    this.refreshMs = opts.refreshMs ?? 5000;
  }

  /** The same hooks through another store wrapper, sharing the registry copy. */
  withStore(store: ObjectStore): HookStore {
    return new HookStore(store, this.opts, this.copy);
  }

  async create(hook: Omit<Hook, 'format' | 'id'>, signal?: AbortSignal): Promise<Hook> {
    const hooks = await this.list(signal, { fresh: true });
    if (hooks.length >= MAX_HOOKS)
      throw new BranchgraphError('payload_too_large', `a graph holds at most ${MAX_HOOKS} hooks; remove one first`);
    const full: Hook = HookZ.parse({ format: 1, id: newId(this.clock()), ...hook });
    await this.store.putIfAbsent(hookKey(full.id), encodeJson(full), { signal });
    this.copy.cached = undefined;
    return full;
  }

  async get(id: string, signal?: AbortSignal): Promise<Hook> {
    if (!ID_RE.test(id))
      throw new BranchgraphError('invalid_input', `${JSON.stringify(id)} is not a hook id`, {
        issues: [{ path: 'id', message: 'not a hook id' }],
      });
    try {
      return decodeJson(HookZ, await this.store.get(hookKey(id), { signal }), hookKey(id));
    } catch (e) {
      if (isBranchgraphError(e, 'object_not_found'))
        throw new BranchgraphError('not_found', `hook ${id} does not exist`, { details: { key: id } });
      throw e;
    }
  }

  async delete(id: string, signal?: AbortSignal): Promise<Hook> {
    const hook = await this.get(id, signal);
    await this.store.deleteMany([hookKey(id)], { signal });
    this.copy.cached = undefined;
    return hook;
  }

  /** Every registered hook, oldest first: from a copy at most `refreshMs` old unless `fresh`. */
  async list(signal?: AbortSignal, opts: { fresh?: boolean } = {}): Promise<Hook[]> {
    const c = this.copy.cached;
    if (opts.fresh !== true && c !== undefined && this.clock() - c.at < this.refreshMs) return c.hooks;
    this.copy.loading ??= this.load(signal).finally(() => {
      this.copy.loading = undefined;
    });
    return this.copy.loading;
  }

  private async load(signal?: AbortSignal): Promise<Hook[]> {
    const at = this.clock();
    const keys: string[] = [];
    for await (const o of this.store.list(HOOKS_PREFIX, { signal })) if (/^hooks\/[0-9A-Z]{26}\.json$/.test(o.key)) keys.push(o.key);
    const hooks: Hook[] = [];
    for (const key of keys.sort()) {
      try {
        hooks.push(decodeJson(HookZ, await this.store.get(key, { signal }), key));
      } catch (e) {
        // Removed between the listing and the read.
        if (!isBranchgraphError(e, 'object_not_found')) throw e;
      }
    }
    this.copy.cached = { hooks, at };
    return hooks;
  }

  /** Where `shard`'s deliveries to `hook` stand (model/delivery-cursor.ts); undefined before its first. */
  async cursor(hook: string, shard: string, signal?: AbortSignal): Promise<number | undefined> {
    const key = cursorKey(hook, shard);
    const bytes = await getIfPresent(this.store, key, { signal });
    return bytes === undefined ? undefined : decodeJson(CursorZ, bytes, key).seq;
  }

  /** Record where `shard`'s deliveries to `hook` stand; a later write wins, and positions only grow. */
  async saveCursor(hook: string, shard: string, seq: number): Promise<void> {
    await this.store.putOverwrite(cursorKey(hook, shard), encodeJson({ format: 1, seq }));
  }

  async addDeadLetter(letter: Omit<DeadLetter, 'format' | 'id' | 'time'>): Promise<DeadLetter> {
    const now = this.clock();
    const full: DeadLetter = { format: 1, id: newId(now), time: new Date(now).toISOString(), ...letter };
    await this.store.putIfAbsent(letterKey(full.id), encodeJson(full));
    return full;
  }

  /** One dead letter, `not_found` when there is none by that id. */
  async deadLetter(id: string, signal?: AbortSignal): Promise<DeadLetter> {
    if (!ID_RE.test(id)) throw new BranchgraphError('not_found', `no dead letter ${id}`, { details: { key: id } });
    try {
      return decodeJson(DeadLetterZ, await this.store.get(letterKey(id), { signal }), letterKey(id));
    } catch (e) {
      if (isBranchgraphError(e, 'object_not_found'))
        throw new BranchgraphError('not_found', `no dead letter ${id}`, { details: { key: id } });
      throw e;
    }
  }

  async deleteDeadLetters(ids: readonly string[], signal?: AbortSignal): Promise<void> {
    if (ids.length > 0) await this.store.deleteMany(ids.map(letterKey), { signal });
  }

  /** Up to `limit` dead letters after `after` (an id), oldest first; `next` continues when more follow. */
  async deadLetters(page: { after?: string | undefined; limit: number; signal?: AbortSignal | undefined }) {
    const letters: DeadLetter[] = [];
    let next: string | undefined;
    const startAfter = page.after === undefined ? undefined : letterKey(page.after);
    for await (const o of this.store.list(DEAD_LETTERS_PREFIX, { signal: page.signal, ...(startAfter ? { startAfter } : {}) })) {
      if (letters.length === page.limit) {
        next = letters.at(-1)?.id;
        break;
      }
      letters.push(decodeJson(DeadLetterZ, await this.store.get(o.key, { signal: page.signal }), o.key));
    }
    return { letters, next };
  }
}
