/**
 * What every operation runs under: who asks and over what transport, the
 * abort signal, the request's logger and id, the snapshots it already
 * resolved, and where reads count their cost.
 */
import type { Logger } from 'pino';
import type { Role } from './auth.js';
import type { TokenScope } from '../model/token-scope.js';
import type { Snapshot } from '../graph/snapshot.js';

/** What carries a request; HTTP merges are capped at width one. */
export type Transport = 'http' | 'embedded' | 'cli' | 'gqt';

/** Who asks and over what: the transport (HTTP caps merges at width one), the actor, the abort signal, the request's logger. */
export interface RequestContext {
  transport: Transport;
  signal?: AbortSignal;
  log?: Logger;
  /** Who is calling: the token's identity over HTTP, the configured actor elsewhere. Recorded as each commit's actor. */
  actor?: string;
  /** The caller's role over HTTP; an embedded caller, who owns the process, counts as admin. */
  role?: Role;
  /** The branches and graphs the caller's token may touch (access.ts); no limit when absent. */
  scope?: TokenScope;
  /** The transport's request id, quoted in errors whose detail only the log holds. */
  requestId?: string;
  /** The id the client chose for this request's long operation (`Operation-Id`), to follow its progress. */
  operationId?: string;
  /**
   * Snapshots this request has read, by ref: a request that reads many times (a typed GraphQL
   * document) resolves each ref once, so every field of it sees the same commit.
   */
  pins?: SnapshotPins;
  /** When set, reads count their store calls and rows here (a typed GraphQL `@explain`). */
  meter?: ReadMeter;
  /** The caller's bearer token over HTTP: a merge forwarded to the branch's publisher is sent as the caller (merge-forwarding.ts). */
  bearer?: string;
  /** A merge another server forwarded here: run here, never forwarded again. */
  forwarded?: boolean;
}

/** The snapshot each ref of one request resolved to. */
export type SnapshotPins = Map<string, Promise<Snapshot>>;

/** `ctx` with its snapshots pinned (a pin map of its own unless it has one): each ref it reads resolves once. */
export function pinnedContext(ctx: RequestContext): RequestContext {
  return ctx.pins !== undefined ? ctx : { ...ctx, pins: new Map() };
}

/** What reads cost: store calls and rows read. */
export interface ReadMeter {
  storeCalls: number;
  rowsRead: number;
  /** Distinct run files and segments the reads decoded, from the cache or the store. */
  segmentsRead: number;
}
