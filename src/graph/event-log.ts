/**
 * The event log: every change to the graph (each commit, branch record,
 * tag and merge request version) appended once, in one order, readable by
 * cursor from any process.
 *
 * Exactly once without a transaction. An event names its *source*: the
 * object whose creation is the change (a manifest with its commit id, a
 * branch record, a tag, a request version, each with a hash of what it
 * says). A writer appends the event, create-only at the next free
 * sequence number, before it writes the source (for a commit, beside the
 * commit index entry and the parts, so publication waits no longer), and
 * marks it confirmed (`<seq>.ok`) once the source has landed. So:
 *  - a crash before the source lands leaves an event whose source never
 *    appears: an orphan, which readers skip;
 *  - a crash after leaves an event without its mark, whose source is
 *    there: readers count it (and mark it);
 *  - a writer that lost its race (another manifest took that version)
 *    leaves an event whose source says something else: an orphan too;
 *  - a writer that gives its source up before writing it (its request
 *    aborted, a write before it failed, the lane tip it built on did not
 *    land) marks the event void (`<seq>.void`): an orphan at once, so one
 *    failed publication does not hold every reader back until the
 *    deadline below. Only a source never written is voided: a write whose
 *    outcome is unknown (a lost response) is left to the readers.
 * An event is written once per attempt, and an attempt's source is unique
 * (a fresh commit id, a record's content), so no change has two events.
 *
 * Order. Events are read in sequence order, and a reader never passes an
 * event it cannot decide yet (its source absent, its writer maybe still
 * publishing): it stops there until the source lands or the event is
 * older, by the store's clock, than a publication may take
 * (MAX_PUBLICATION_MS), after which it is an orphan. Within a branch,
 * sequence order is commit order: an attempt appends its event after
 * reading the head it builds on, so an event of a later version was
 * appended after that of the earlier one. A crash in the middle of a
 * publication can hold readers back by up to that bound; nothing is lost
 * or reordered.
 *
 * Appends of one process take numbers in the order they are asked for and
 * go out together (a lane's merges append theirs at once), so a number may
 * be taken while the event below it is still landing. A reader treats such
 * a gap as an undecided event of the writer of the next event above it
 * (that process took the number before it): it waits there, and the same
 * deadline and lease decide it. An append that fails voids its number at
 * once, so a failure holds no reader.
 */
import { z } from 'zod';
import { contentHash } from '../model/canonical.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { BEST_EFFORT, type ObjectStore } from '../store/object-store.js';
import { storeTime } from '../store/store-clock.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { storedText } from '../model/compress-stored.js';
import { leaseHolds, type WriterLease } from './writer-lease.js';
import { nextTurn } from '../model/turns.js';

export const EVENTS_PREFIX = 'events/';
const eventKey = (seq: number): string => `${EVENTS_PREFIX}${String(seq).padStart(12, '0')}.json`;
const okKey = (seq: number): string => `${EVENTS_PREFIX}${String(seq).padStart(12, '0')}.ok`;
const voidKey = (seq: number): string => `${EVENTS_PREFIX}${String(seq).padStart(12, '0')}.void`;
const HINT_KEY = `${EVENTS_PREFIX}hint.json`;
const KEY_RE = /^events\/(\d{12})\.(json|ok|void)$/;
/** How often a writer records the sequence it reached, so a cold process lists from near the end. */
const HINT_EVERY = 64;

export const EVENT_KINDS = [
  'commit',
  'branch_created',
  'branch_deleted',
  'branch_expired',
  'branch_reset',
  'branch_protected',
  'branch_unprotected',
  'tag_created',
  'request_opened',
  'request_revised',
  'request_reviewed',
  'request_resolutions',
  'request_checked',
  'request_merge_started',
  'request_merged',
  'request_closed',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

const SourceZ = z.object({ key: z.string(), hash: z.string().optional(), commit: z.string().optional() });

export const GraphEventZ = z.object({
  format: z.literal(1),
  seq: z.number().int().min(1),
  kind: z.enum(EVENT_KINDS),
  time: z.string(),
  actor: z.string(),
  branch: z.string().optional(),
  /** A commit's id (and, for commit events, its kind). */
  commit: z.string().optional(),
  commitKind: z.string().optional(),
  tag: z.string().optional(),
  request: z.string().optional(),
  source: SourceZ,
  /** The process that appended it, when it held a writer lease (writer-lease.ts). */
  writer: z.object({ id: z.string(), incarnation: z.string() }).optional(),
});
export type GraphEvent = z.infer<typeof GraphEventZ>;
export type EventDraft = Omit<GraphEvent, 'format' | 'seq' | 'time'>;

/**
 * The hash an event records of its source: of the source's text, whether it
 * is stored plain or compressed (model/compress-stored.ts), so an event
 * written before compression keeps matching its plain source, and the hash
 * never depends on the envelope. Bytes that do not decode hash as they are,
 * and so match nothing an event recorded.
 */
export function sourceHash(bytes: Uint8Array): string {
  try {
    return contentHash(storedText(bytes));
  } catch {
    return contentHash(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
  }
}

/** A page of the log: its events, where to read on, and the undecided event it stopped at, if any. */
export interface EventPage {
  events: GraphEvent[];
  next: number;
  /**
   * The event whose source has not landed and whose writer may still be publishing: nothing after it
   * is read until it lands or `deadline` passes; a writer's lease that lapses (LEASE_TTL_MS after its
   * process died) or a restart of its process decides it sooner.
   */
  waitingOn: { seq: number; writer: string | null; deadline: string } | null;
}

/** Events appended here whose source has not landed yet, kept for the listeners. */
const MAX_APPENDED = 10_000;

/** What every view of one store's log shares in a process. */
interface Known {
  /** The highest sequence number this process knows is taken. */
  taken?: number;
  /** The highest sequence number an append of this process took (its event may still be landing). */
  reserved?: number;
  loading?: Promise<number>;
  /** Confirmations in flight. */
  confirming: Set<Promise<void>>;
  listeners: Set<(event: GraphEvent) => void>;
  appended: Map<number, GraphEvent>;
  /** This process's writer lease, once a server took one. */
  lease?: WriterLease;
}

export class EventLog {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: () => number,
    private readonly known: Known = { confirming: new Set(), listeners: new Set(), appended: new Map() },
  ) {}

  /**
   * Call `listener` with each event this process appends, once its source has landed (the
   * webhooks follow this). Events other processes append reach their own listeners, not these.
   */
  onLanded(listener: (event: GraphEvent) => void): () => void {
    this.known.listeners.add(listener);
    return () => this.known.listeners.delete(listener);
  }

  /** The same log through another store wrapper, sharing what it knows. */
  withStore(store: ObjectStore): EventLog {
    return new EventLog(store, this.clock, this.known);
  }

  /** Name this process's events by `lease`'s writer from now on (a server, at its start). */
  useLease(lease: WriterLease | undefined): void {
    if (lease === undefined) delete this.known.lease;
    else this.known.lease = lease;
  }

  /** Before an event's source is written: the writer's lease must hold while it lands (writer-lease.ts). */
  async beforeSource(signal?: AbortSignal): Promise<void> {
    await this.known.lease?.ensureFresh(signal);
  }

  /** Forget what this process knew, as a restarted one would. */
  forget(): void {
    delete this.known.taken;
    delete this.known.reserved;
  }

  /** Append an event for the object written next at `key` (its bytes `bytes`), then write it with `write`, then confirm. */
  async around<T>(
    a: { draft: Omit<EventDraft, 'source'>; key: string; bytes: Uint8Array; signal?: AbortSignal | undefined },
    write: () => Promise<T>,
  ): Promise<T> {
    const seq = await this.append({ ...a.draft, source: { key: a.key, hash: sourceHash(a.bytes) } }, a.signal);
    let out: T;
    try {
      await this.beforeSource(a.signal);
      out = await write();
    } catch (e) {
      // Refused because its object exists (a name taken meanwhile): certainly never written, so the
      // event is void now. Any other failure may have landed, and is left for readers to check.
      if (isBranchgraphError(e, 'object_exists')) await this.abandon(seq);
      throw e;
    }
    // Records, tags and requests change rarely: their confirmation is waited for. A commit's is not (publisher.ts).
    await this.confirm(seq);
    return out;
  }

  /** Append `draft` at the next free sequence number; the caller writes its source next, then `confirm`s. */
  async append(draft: EventDraft, signal?: AbortSignal): Promise<number> {
    // Appends of this process take numbers in the order they are asked for and go out together,
    // rather than racing for one number and retrying a round trip later: the publication lanes rely
    // on the order, and readers wait at a number taken whose event has not landed yet (`page`).
    let seq = Math.max(await this.highest(signal), this.known.reserved ?? 0) + 1;
    for (;;) {
      this.known.reserved = Math.max(this.known.reserved ?? 0, seq);
      const writer = this.known.lease?.writer;
      const event: GraphEvent = { format: 1, seq, time: new Date(this.clock()).toISOString(), ...draft, ...(writer ? { writer } : {}) };
      try {
        await this.store.putIfAbsent(eventKey(seq), encodeJson(event), { signal });
        this.known.taken = Math.max(this.known.taken ?? 0, seq);
        if (this.known.listeners.size > 0) this.remember(event);
        if (seq % HINT_EVERY === 0) void this.store.putOverwrite(HINT_KEY, encodeJson({ seq }), BEST_EFFORT).catch(() => undefined);
        return seq;
      } catch (e) {
        if (!isBranchgraphError(e, 'object_exists')) {
          // Its caller gives its source up: the number is void at once, whether the event landed or not.
          void this.abandon(seq);
          throw e;
        }
        // Taken by another process: the next number this process has not taken.
        seq = Math.max(seq, this.known.reserved) + 1;
      }
    }
  }

  /** Keep an appended event until its source lands (or, bounded, is given up on as an orphan). */
  private remember(event: GraphEvent): void {
    const { appended } = this.known;
    appended.set(event.seq, event);
    for (const seq of appended.keys()) {
      if (appended.size <= MAX_APPENDED) break;
      appended.delete(seq);
    }
  }

  /** Mark `seq`'s source as landed (best effort: readers check the source of an unmarked event). */
  confirm(seq: number): Promise<void> {
    const event = this.known.appended.get(seq);
    if (event !== undefined) {
      this.known.appended.delete(seq);
      for (const l of this.known.listeners) l(event);
    }
    // From the next turn of the loop: a local directory writes an unsynced mark on the loop itself,
    // and a change's caller, whose reply waits on no mark, goes first.
    return this.track(nextTurn().then(() => this.store.putIfAbsent(okKey(seq), new Uint8Array(0), BEST_EFFORT)));
  }

  /**
   * Mark `seq` void: its writer gave its source up without writing it, and never will (a fresh
   * attempt appends a fresh event). Best effort: a reader that does not see the mark passes the
   * event at the deadline, as after a crash.
   */
  abandon(seq: number): Promise<void> {
    this.known.appended.delete(seq);
    return this.track(this.store.putIfAbsent(voidKey(seq), new Uint8Array(0), BEST_EFFORT));
  }

  /** A mark being written, which `settle` waits for; its failure is only a reader's longer wait. */
  private track(put: Promise<unknown>): Promise<void> {
    const w = put.then(
      () => undefined,
      () => undefined,
    );
    this.known.confirming.add(w);
    void w.finally(() => this.known.confirming.delete(w));
    return w;
  }

  /** Once the marks already started (confirmations, voids) have landed or failed. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.known.confirming]);
  }

  /**
   * Start finding where the log ends, when this process does not know yet, so a publication's
   * first append does not wait two round trips for it after planning (a cold server's first
   * merge). Shared with the append that follows; a failure surfaces there.
   */
  warm(): void {
    if (this.known.taken === undefined) this.highest().catch(() => undefined);
  }

  private highest(signal?: AbortSignal): Promise<number> {
    if (this.known.taken !== undefined) return Promise.resolve(this.known.taken);
    // One lookup at a time: concurrent first appends share it.
    this.known.loading ??= this.lookUp(signal).finally(() => {
      delete this.known.loading;
    });
    return this.known.loading;
  }

  private async lookUp(signal?: AbortSignal): Promise<number> {
    let from = 0;
    try {
      from = decodeJson(z.object({ seq: z.number().int().min(0) }), await this.store.get(HINT_KEY, { signal }), HINT_KEY).seq;
    } catch (e) {
      if (!isBranchgraphError(e, 'object_not_found') && !isBranchgraphError(e, 'corrupt_object')) throw e;
    }
    let highest = 0;
    for await (const o of this.store.list(EVENTS_PREFIX, { signal, ...(from > 0 ? { startAfter: eventKey(from - 1) } : {}) })) {
      const m = KEY_RE.exec(o.key);
      if (m !== null) highest = Math.max(highest, Number(m[1]));
    }
    this.known.taken = Math.max(this.known.taken ?? 0, highest);
    return this.known.taken;
  }

  /**
   * Up to `limit` events after sequence `after`, in order, each once: orphans skipped, and stopping
   * before the first event that cannot be decided yet. `next` is the cursor to read on from.
   */
  async page(a: PageRequest): Promise<EventPage> {
    const found = await this.listAfter(a.after, a.signal);
    const walk = new PageWalk(this.store, a, found);
    const events: GraphEvent[] = [];
    let next = a.after;
    for (let seq = a.after + 1; seq <= walk.top && events.length < a.limit; seq++) {
      const step = await walk.decide(seq);
      if ('waiting' in step) return { events, next, waitingOn: step.waiting };
      if ('end' in step) break;
      if ('orphan' in step && step.orphan === 'mark') void this.abandon(seq);
      if ('landed' in step) void this.confirm(seq);
      if ('event' in step) events.push(step.event);
      next = seq;
    }
    return { events, next, waitingOn: null };
  }

  /** What the log holds after `after`, by sequence number. */
  private async listAfter(after: number, signal?: AbortSignal): Promise<Map<number, Listed>> {
    const found = new Map<number, Listed>();
    // `<seq>.ok` sorts after `<seq>.json` (and `.void` after both): the cursor's own objects are skipped below.
    for await (const o of this.store.list(EVENTS_PREFIX, { signal, startAfter: okKey(after) })) {
      const m = KEY_RE.exec(o.key);
      if (m === null) continue;
      const seq = Number(m[1]);
      if (seq <= after) continue;
      const f = found.get(seq) ?? { ok: false };
      if (m[2] === 'ok') f.ok = true;
      else if (m[2] === 'void') f.void = true;
      else {
        f.json = o.key;
        f.writtenAt = o.lastModified;
      }
      found.set(seq, f);
    }
    return found;
  }

  /** Whether `after` is past the log's end (no event holds that sequence number yet); looked up only past what this process knows. */
  async isPastEnd(after: number, signal?: AbortSignal): Promise<boolean> {
    if (after <= (this.known.taken ?? 0)) return false;
    delete this.known.taken;
    return after > (await this.highest(signal));
  }
}

interface PageRequest {
  after: number;
  limit: number;
  sourceSays: (event: GraphEvent) => Promise<'landed' | 'absent' | 'other'>;
  /** How long an event's source may take to land (a publication's deadline, MAX_PUBLICATION_MS). */
  undecidedMs: number;
  signal?: AbortSignal | undefined;
}

/** A sequence number as listed: its event's key and time, and its marks. */
interface Listed {
  json?: string;
  ok: boolean;
  void?: true;
  writtenAt?: number | undefined;
}

/**
 * What a reader makes of one sequence number: an event to list (confirmed on the way when its
 * source is found landed), an orphan to skip (marked void when its writer's lease lapsed, so no
 * reader decides it again), a number to wait at, or the end of what is there.
 */
type Step =
  | { event: GraphEvent; landed?: true }
  | { orphan: 'mark' | 'leave' }
  | { waiting: NonNullable<EventPage['waitingOn']> }
  | { end: true };

/** One page's reading of the log: what was listed, the events read (each once) and the store's time. */
class PageWalk {
  private now: number | undefined;
  private readonly read = new Map<number, Promise<GraphEvent>>();
  private readonly listed: number[];
  readonly top: number;

  constructor(
    private readonly store: ObjectStore,
    private readonly a: PageRequest,
    private readonly found: Map<number, Listed>,
  ) {
    this.listed = [...found.keys()].sort((x, y) => x - y);
    this.top = this.listed[this.listed.length - 1] ?? a.after;
  }

  async decide(seq: number): Promise<Step> {
    const f = this.found.get(seq);
    if (f?.json === undefined) return f?.void === true ? { orphan: 'leave' } : this.gap(seq);
    // Given up by its writer before its source was written: an orphan, decided without reading it.
    if (f.void === true && !f.ok) return { orphan: 'leave' };
    const event = await this.eventAt(seq, f.json);
    if (f.ok) return { event };
    const says = await this.a.sourceSays(event);
    if (says === 'landed') return { event, landed: true };
    if (says === 'other') return { orphan: 'leave' };
    // Its writer may still be publishing: nothing after it is read until that is decided, by the
    // writer's lease when it had one (writer-lease.ts), else by the publication deadline.
    const may = await this.mayLand(f.writtenAt, event.writer);
    if (may === 'undecided') return { waiting: this.waitingFor(seq, event.writer, f.writtenAt) };
    return { orphan: may === 'gone' ? 'mark' : 'leave' };
  }

  /**
   * A number with no event (yet): one an append took whose event is still landing (the appends of
   * one process go out together, EventLog `append`), or that failed. It is the writer's of the next
   * event above it, written after it was taken, and the same deadline decides it. Nothing above it:
   * the page ends there.
   */
  private async gap(seq: number): Promise<Step> {
    const above = this.listed.find((n) => n > seq && this.found.get(n)?.json !== undefined);
    if (above === undefined) return { end: true };
    const at = this.found.get(above) as Listed & { json: string };
    const event = await this.eventAt(above, at.json);
    const may = await this.mayLand(at.writtenAt, event.writer);
    return may === 'undecided' ? { waiting: this.waitingFor(seq, event.writer, at.writtenAt) } : { orphan: 'mark' };
  }

  private eventAt(seq: number, key: string): Promise<GraphEvent> {
    let e = this.read.get(seq);
    if (e === undefined) {
      e = this.store.get(key, { signal: this.a.signal }).then((bytes) => {
        const event = decodeJson(GraphEventZ, bytes, key);
        if (event.seq !== seq) throw new BranchgraphError('corrupt_object', `${key} holds event ${event.seq}`, { details: { key } });
        return event;
      });
      this.read.set(seq, e);
    }
    return e;
  }

  /** Whether what was written at `writtenAt` by `writer` may still be published: until the deadline, or its writer's lease lapsing. */
  private async mayLand(writtenAt: number | undefined, writer: GraphEvent['writer']): Promise<'undecided' | 'orphan' | 'gone'> {
    this.now ??= await storeTime(this.store, this.a.signal);
    if (writtenAt !== undefined && this.now - writtenAt > this.a.undecidedMs) return 'orphan';
    if (writer !== undefined && !(await leaseHolds({ store: this.store, writer, now: this.now, signal: this.a.signal }))) return 'gone';
    return 'undecided';
  }

  /** What a reader stopped at, and until when at most (the publication deadline, by the store's clock). */
  private waitingFor(seq: number, writer: GraphEvent['writer'], writtenAt: number | undefined): NonNullable<EventPage['waitingOn']> {
    const deadline = (writtenAt ?? (this.now as number)) + this.a.undecidedMs;
    return { seq, writer: writer?.id ?? null, deadline: new Date(deadline).toISOString() };
  }
}
