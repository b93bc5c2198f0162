/**
 * Delivering the graph's events to its webhooks, and asking check hooks
 * about merge request revisions.
 *
 * Events reach the dispatcher from the event log of this process once
 * their change has landed (graph/event-log.ts `onLanded`), so each event
 * is delivered by the server that made the change, and a change never
 * waits for a receiver: it only puts a delivery on a bounded queue. A
 * delivery is a signed POST (HMAC-SHA256 over `<timestamp>.<body>` in
 * `X-Branchgraph-Signature`), tried up to `maxAttempts` times with growing,
 * jittered waits (model/hook.ts), each attempt bounded by `timeoutMs`. One
 * that runs out of attempts, finds the queue full, or is still queued when
 * the server stops becomes a dead letter in the store for an admin to
 * read. Each hook has its own queue and its own attempts in flight, so a
 * slow or failing receiver costs only its own hook, and the server at most
 * that hook's queue.
 * The delivery id (`<event seq>-<hook id>`) is the same on every attempt,
 * so a receiver can drop a repeat. Deliveries are at least once across
 * crashes: each hook's cursor (service/delivery-cursors.ts) says up to
 * which of this server's events every delivery settled, and a restarted
 * server offers again, from the feed, what lies past it.
 *
 * A check is asked synchronously by whoever needs its answer (a merge
 * request action, see request-checks.ts): one signed POST within
 * `timeoutMs`, answered `{"status": "pass" | "fail", "message": …}`.
 * Anything else (no answer in time, a non-2xx status, a body that is not
 * such an answer) is the check's `error`, which does not pass.
 */
import { createHmac } from 'node:crypto';
import { BranchgraphError } from '../model/errors.js';
import type { Logger } from 'pino';
import type { GraphEvent } from '../graph/event-log.js';
import type { Graph } from '../graph/graph.js';
import { DeliveryCursors } from './delivery-cursors.js';
import { CheckAnswerZ, hookUrlProblem, hookWants, retryDelayMs, type CheckResult, type Hook, type RetryPolicy } from '../model/hook.js';

export interface HookSettings {
  /** Host patterns hooks may call (model/hook.ts); empty allows none. */
  allowlist: string[];
  /** How long one delivery attempt or one check may take. */
  timeoutMs: number;
  retry: RetryPolicy;
  /** Deliveries of one hook waiting or being retried, at most; more become dead letters at once. */
  queueLimit: number;
  /** Deliveries of one hook in flight at once (each hook has its own). */
  concurrency: number;
}

export const DEFAULT_HOOK_SETTINGS: HookSettings = {
  allowlist: [],
  timeoutMs: 10_000,
  retry: { maxAttempts: 6, baseMs: 1000, maxMs: 60_000 },
  queueLimit: 1000,
  concurrency: 4,
};

/** The most bytes of a receiver's answer read (a check's verdict, an error's start). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** One hook's deliveries from this process since it started. */
export interface HookStats {
  delivered: number;
  failedAttempts: number;
  deadLetters: number;
  queued: number;
  lastError: string | null;
  /** Milliseconds from the change landing to the receiver's 2xx, of the latest delivery. */
  lastLatencyMs: number | null;
}

interface Delivery {
  hook: Hook;
  id: string;
  event: GraphEvent;
  body: string;
  attempt: number;
  /** When the change landed, for the latency. */
  since: number;
  /** A dead letter an admin redelivers: its event settled long ago, so no cursor counts it. */
  again?: true;
}

const emptyStats = (): HookStats => ({ delivered: 0, failedAttempts: 0, deadLetters: 0, queued: 0, lastError: null, lastLatencyMs: null });

/** The signature a receiver recomputes: `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>` under the hook's secret. */
export function hookSignature(a: { secret: string; timestamp: string; body: string }): string {
  return `sha256=${createHmac('sha256', a.secret).update(`${a.timestamp}.${a.body}`).digest('hex')}`;
}

export class HookDispatcher {
  /**
   * Each hook's own lane: its queue and its attempts in flight. A slow or dead receiver fills only
   * its own lane (its queue limit, its concurrency), so it costs no other hook a delivery.
   */
  private readonly waiting = new Map<string, Delivery[]>();
  private readonly inFlight = new Map<string, number>();
  /** Deliveries waiting out their backoff, with the error of their last attempt. */
  private readonly retrying = new Map<NodeJS.Timeout, { d: Delivery; error: string }>();
  private readonly stats = new Map<string, HookStats>();
  private readonly stopping = new AbortController();
  private readonly busy = new Set<Promise<unknown>>();
  private unsubscribe: (() => void) | undefined;
  private readonly cursors: DeliveryCursors;
  /** The first event offered live since the start: a resume offers only what came before it. */
  private firstLive: number | undefined;

  constructor(
    private readonly graph: Graph,
    readonly settings: HookSettings,
    private readonly opts: { shard: string; log?: Logger | undefined },
  ) {
    this.cursors = new DeliveryCursors(graph.hooks, opts.shard);
  }

  private get log(): Logger | undefined {
    return this.opts.log;
  }

  /** Follow the events this process lands. */
  start(): void {
    this.unsubscribe ??= this.graph.onEvent((e) => {
      this.firstLive ??= e.seq;
      this.track(this.offer(e, this.graph.clock()));
    });
  }

  /**
   * Offer again what a crash of this server may have left undelivered: for each hook with a stored
   * cursor, every event past it that this server's shard appended and the hook wants, up to the
   * first event offered live since the start. Runs in the background; `idle` waits for it.
   */
  resume(): void {
    this.track(
      this.replay().catch((e: unknown) => this.log?.warn({ err: e }, 'hook deliveries owed before a restart could not be resumed')),
    );
  }

  private async replay(): Promise<void> {
    const signal = this.stopping.signal;
    const hooks = await this.graph.hooks.list(signal, { fresh: true });
    for (const hook of hooks) {
      let after = await this.cursors.stored(hook.id, signal);
      while (after !== undefined && !signal.aborted) {
        const page = await this.graph.events({ after, limit: 100, signal });
        for (const e of page.events) {
          if (this.firstLive !== undefined && e.seq >= this.firstLive) return;
          if (e.writer?.id === this.opts.shard && hookWants(hook, e.kind)) await this.offerTo(hook, e, this.graph.clock());
        }
        if (page.events.length === 0) break;
        after = page.next;
      }
    }
  }

  /**
   * Queue a dead letter's delivery again (an admin asked): the same body and delivery id, a fresh
   * count of attempts. If it fails again it becomes a new dead letter. Refused when the hook is gone
   * or its queue is full.
   */
  redeliver(hook: Hook, letter: { delivery: string; event: string; body: string }): void {
    if (this.queued(hook.id) >= this.settings.queueLimit)
      throw new BranchgraphError('overloaded', `hook ${hook.id}'s delivery queue is full (${this.settings.queueLimit}); retry later`);
    const seq = Number(letter.delivery.split('-')[0]);
    const event = { seq, kind: letter.event } as GraphEvent;
    this.statsFor(hook.id).queued++;
    this.enqueue({ hook, id: letter.delivery, event, body: letter.body, attempt: 1, since: this.graph.clock(), again: true });
    this.pump(hook.id);
  }

  /** Stop: in-flight attempts are aborted, every queued delivery becomes a dead letter, and the cursors are written. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stopping.abort();
    this.drainToDead();
    await Promise.allSettled([...this.busy]);
    await this.cursors.flush();
  }

  /** Whether a delivery is being offered, queued or attempted now (retries waiting on their backoff are not). */
  get active(): boolean {
    return this.busy.size > 0 || [...this.waiting.values()].some((q) => q.length > 0) || [...this.inFlight.values()].some((n) => n > 0);
  }

  /** Once nothing is being offered, queued or attempted (see `active`). */
  async idle(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy]);
  }

  /** This process's delivery counts per hook id. */
  statsOf(hookId: string): HookStats {
    return { ...(this.stats.get(hookId) ?? emptyStats()) };
  }

  private statsFor(hookId: string): HookStats {
    let s = this.stats.get(hookId);
    if (s === undefined) {
      s = emptyStats();
      this.stats.set(hookId, s);
    }
    return s;
  }

  private track<T>(p: Promise<T>): void {
    this.busy.add(p);
    void p.finally(() => this.busy.delete(p)).catch(() => undefined);
  }

  /** One hook's deliveries waiting, backing off or in flight here. */
  private queued(hookId: string): number {
    let retrying = 0;
    for (const { d } of this.retrying.values()) if (d.hook.id === hookId) retrying++;
    return (this.waiting.get(hookId)?.length ?? 0) + retrying + (this.inFlight.get(hookId) ?? 0);
  }

  private enqueue(d: Delivery): void {
    const q = this.waiting.get(d.hook.id);
    if (q === undefined) this.waiting.set(d.hook.id, [d]);
    else q.push(d);
  }

  private async offer(event: GraphEvent, since: number): Promise<void> {
    if (this.stopping.signal.aborted) return;
    let hooks: Hook[];
    try {
      hooks = await this.graph.hooks.list(this.stopping.signal);
    } catch (e) {
      this.log?.warn({ err: e, event: event.seq }, 'hook registry unreadable; event not delivered to hooks');
      return;
    }
    for (const hook of hooks) if (hookWants(hook, event.kind)) await this.offerTo(hook, event, since);
  }

  /** Queue `event` for `hook` (its cursor notes it first), or keep it as a dead letter when the hook's queue is full. */
  private async offerTo(hook: Hook, event: GraphEvent, since: number): Promise<void> {
    const { source: _s, format: _f, writer: _w, ...shown } = event;
    const id = `${event.seq}-${hook.id}`;
    const body = JSON.stringify({ delivery: id, hook: hook.id, event: shown });
    const d: Delivery = { hook, id, event, body, attempt: 1, since };
    await this.cursors.offered(hook.id, event.seq);
    if (this.queued(hook.id) >= this.settings.queueLimit) {
      await this.dead(d, { error: `the hook's delivery queue was full (${this.settings.queueLimit})`, attempts: 0, accepted: false });
      return;
    }
    this.statsFor(hook.id).queued++;
    this.enqueue(d);
    this.pump(hook.id);
  }

  /** Start what one hook's lane may: at most `concurrency` attempts of that hook at once. */
  private pump(hookId: string): void {
    const q = this.waiting.get(hookId) ?? [];
    while ((this.inFlight.get(hookId) ?? 0) < this.settings.concurrency && q.length > 0 && !this.stopping.signal.aborted) {
      const d = q.shift() as Delivery;
      this.inFlight.set(hookId, (this.inFlight.get(hookId) ?? 0) + 1);
      this.track(
        this.attempt(d).finally(() => {
          this.inFlight.set(hookId, (this.inFlight.get(hookId) ?? 1) - 1);
          this.pump(hookId);
        }),
      );
    }
    if (q.length === 0) this.waiting.delete(hookId);
  }

  private drainToDead(): void {
    const waiting = [...this.waiting.values()].flat();
    this.waiting.clear();
    for (const d of waiting)
      this.track(this.dead(d, { error: 'the server stopped before it was delivered', attempts: d.attempt - 1, accepted: true }));
    for (const [timer, { d, error }] of this.retrying) {
      clearTimeout(timer);
      this.retrying.delete(timer);
      this.track(
        this.dead(d, { error: `the server stopped before attempt ${d.attempt}; last: ${error}`, attempts: d.attempt - 1, accepted: true }),
      );
    }
  }

  private async attempt(d: Delivery): Promise<void> {
    const stats = this.statsFor(d.hook.id);
    const headers = { 'x-branchgraph-event': d.event.kind, 'x-branchgraph-delivery': d.id, 'x-branchgraph-attempt': String(d.attempt) };
    const error = await this.post(d.hook, { body: d.body, headers }).then(
      (r) => (r.ok ? undefined : r.error),
      (e: unknown) => String(e),
    );
    if (error === undefined) {
      stats.queued--;
      stats.delivered++;
      stats.lastLatencyMs = this.graph.clock() - d.since;
      if (d.again !== true) this.cursors.settled(d.hook.id, d.event.seq);
      return;
    }
    stats.failedAttempts++;
    stats.lastError = error;
    if (d.attempt >= this.settings.retry.maxAttempts || this.stopping.signal.aborted) {
      const why = this.stopping.signal.aborted ? `the server stopped during attempt ${d.attempt}: ${error}` : error;
      await this.dead(d, { error: why, attempts: d.attempt, accepted: true });
      return;
    }
    const wait = retryDelayMs(d.attempt, this.settings.retry, Math.random());
    const next = { ...d, attempt: d.attempt + 1 };
    const timer = setTimeout(() => {
      this.retrying.delete(timer);
      this.enqueue(next);
      this.pump(next.hook.id);
    }, wait);
    timer.unref();
    this.retrying.set(timer, { d: next, error });
  }

  private async dead(d: Delivery, a: { error: string; attempts: number; accepted: boolean }): Promise<void> {
    const stats = this.statsFor(d.hook.id);
    if (a.accepted) stats.queued--;
    stats.deadLetters++;
    stats.lastError = a.error;
    try {
      const { hook, id: delivery, event, body } = d;
      await this.graph.hooks.addDeadLetter({
        hook: hook.id,
        url: hook.url,
        delivery,
        event: event.kind,
        attempts: a.attempts,
        error: a.error,
        body,
      });
      if (d.again !== true) this.cursors.settled(d.hook.id, d.event.seq);
    } catch (e) {
      // Left unsettled: the cursor stays below it, and a restart offers it again.
      this.log?.error({ err: e, delivery: d.id }, 'dead letter could not be stored');
    }
  }

  /** Ask a check hook about `payload`; every failure to answer is the check's `error`. */
  async check(hook: Hook, payload: Record<string, unknown>, signal?: AbortSignal): Promise<CheckResult> {
    const time = (): string => new Date(this.graph.clock()).toISOString();
    const body = JSON.stringify({ hook: hook.id, check: hook.check, ...payload });
    const r = await this.post(hook, { body, headers: { 'x-branchgraph-event': 'check' }, signal, answer: true }).catch((e: unknown) => ({
      ok: false as const,
      error: String(e),
    }));
    if (!r.ok) return { status: 'error', message: r.error, time: time(), hook: hook.id };
    const parsed = CheckAnswerZ.safeParse(safeJson(r.text));
    if (!parsed.success)
      return {
        status: 'error',
        message: 'the check answered something other than {"status": "pass" | "fail"}',
        time: time(),
        hook: hook.id,
      };
    return { status: parsed.data.status, message: parsed.data.message ?? '', time: time(), hook: hook.id };
  }

  /** One signed POST within the timeout; `ok` on a 2xx, with the answer's text when asked for. */
  private async post(
    hook: Hook,
    a: { body: string; headers: Record<string, string>; signal?: AbortSignal | undefined; answer?: boolean },
  ): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
    const problem = hookUrlProblem(hook.url, this.settings.allowlist);
    if (problem !== undefined) return { ok: false, error: `the hook URL ${problem.message}` };
    const timestamp = String(Math.floor(this.graph.clock() / 1000));
    const signals = [this.stopping.signal, AbortSignal.timeout(this.settings.timeoutMs), ...(a.signal ? [a.signal] : [])];
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.any(signals),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'branchgraph-hooks',
          'x-branchgraph-hook': hook.id,
          'x-branchgraph-timestamp': timestamp,
          'x-branchgraph-signature': hookSignature({ secret: hook.secret, timestamp, body: a.body }),
          ...a.headers,
        },
        body: a.body,
      });
      const wanted = a.answer === true || !res.ok;
      if (!wanted) await res.body?.cancel();
      const text = wanted ? await boundedText(res) : '';
      if (res.status >= 200 && res.status < 300) return { ok: true, text };
      return { ok: false, error: `the receiver answered ${res.status}${text === '' ? '' : `: ${text.slice(0, 200)}`}` };
    } catch (e) {
      const name = (e as Error).name;
      if (name === 'TimeoutError' || (name === 'AbortError' && !this.stopping.signal.aborted && a.signal?.aborted !== true))
        return { ok: false, error: `no answer within ${this.settings.timeoutMs} ms` };
      return { ok: false, error: `the receiver could not be reached: ${(e as Error).message}` };
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The start of a response's text, at most MAX_ANSWER_BYTES, the rest left unread. */
async function boundedText(res: Response): Promise<string> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.byteLength;
    if (size >= MAX_ANSWER_BYTES) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(parts).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
}
