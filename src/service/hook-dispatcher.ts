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
 * read; a slow or failing receiver costs the server at most its queue.
 * The delivery id (`<event seq>-<hook id>`) is the same on every attempt,
 * so a receiver can drop a repeat. A process that crashes loses the
 * deliveries it had queued (the events themselves stay in the feed, which
 * a receiver can read by cursor to fill a gap).
 *
 * A check is asked synchronously by whoever needs its answer (a merge
 * request action, see request-checks.ts): one signed POST within
 * `timeoutMs`, answered `{"status": "pass" | "fail", "message": …}`.
 * Anything else (no answer in time, a non-2xx status, a body that is not
 * such an answer) is the check's `error`, which does not pass.
 */
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { GraphEvent } from '../graph/event-log.js';
import type { Graph } from '../graph/graph.js';
import { CheckAnswerZ, hookUrlProblem, hookWants, retryDelayMs, type CheckResult, type Hook, type RetryPolicy } from '../model/hook.js';

export interface HookSettings {
  /** Host patterns hooks may call (model/hook.ts); empty allows none. */
  allowlist: string[];
  /** How long one delivery attempt or one check may take. */
  timeoutMs: number;
  retry: RetryPolicy;
  /** Deliveries waiting or being retried, at most; more become dead letters at once. */
  queueLimit: number;
  /** Deliveries in flight at once. */
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
}

const emptyStats = (): HookStats => ({ delivered: 0, failedAttempts: 0, deadLetters: 0, queued: 0, lastError: null, lastLatencyMs: null });

/** The signature a receiver recomputes: `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>` under the hook's secret. */
export function hookSignature(a: { secret: string; timestamp: string; body: string }): string {
  return `sha256=${createHmac('sha256', a.secret).update(`${a.timestamp}.${a.body}`).digest('hex')}`;
}

export class HookDispatcher {
  private readonly waiting: Delivery[] = [];
  /** Deliveries waiting out their backoff, with the error of their last attempt. */
  private readonly retrying = new Map<NodeJS.Timeout, { d: Delivery; error: string }>();
  private inFlight = 0;
  private readonly stats = new Map<string, HookStats>();
  private readonly stopping = new AbortController();
  private readonly busy = new Set<Promise<unknown>>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly graph: Graph,
    readonly settings: HookSettings,
    private readonly log?: Logger,
  ) {}

  /** Follow the events this process lands. */
  start(): void {
    this.unsubscribe ??= this.graph.onEvent((e) => this.track(this.offer(e, this.graph.clock())));
  }

  /** Stop: in-flight attempts are aborted and every queued delivery becomes a dead letter. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stopping.abort();
    this.drainToDead();
    await Promise.allSettled([...this.busy]);
  }

  /** Whether a delivery is being offered, queued or attempted now (retries waiting on their backoff are not). */
  get active(): boolean {
    return this.busy.size > 0 || this.waiting.length > 0 || this.inFlight > 0;
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

  private queued(): number {
    return this.waiting.length + this.retrying.size + this.inFlight;
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
    const { source: _s, format: _f, ...shown } = event;
    for (const hook of hooks) {
      if (!hookWants(hook, event.kind)) continue;
      const id = `${event.seq}-${hook.id}`;
      const body = JSON.stringify({ delivery: id, hook: hook.id, event: shown });
      const d: Delivery = { hook, id, event, body, attempt: 1, since };
      if (this.queued() >= this.settings.queueLimit) {
        await this.dead(d, { error: `the delivery queue was full (${this.settings.queueLimit})`, attempts: 0, accepted: false });
        continue;
      }
      this.statsFor(hook.id).queued++;
      this.waiting.push(d);
    }
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.settings.concurrency && this.waiting.length > 0 && !this.stopping.signal.aborted) {
      const d = this.waiting.shift() as Delivery;
      this.inFlight++;
      this.track(
        this.attempt(d).finally(() => {
          this.inFlight--;
          this.pump();
        }),
      );
    }
  }

  private drainToDead(): void {
    for (const d of this.waiting.splice(0))
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
      this.waiting.push(next);
      this.pump();
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
    } catch (e) {
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
