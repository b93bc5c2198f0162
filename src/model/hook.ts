/**
 * Webhooks and pre-merge checks: what an admin registers, which hosts a
 * hook may call, and when a failed delivery is tried again. Pure: storage
 * is graph/hooks.ts, delivery is service/hook-dispatcher.ts.
 *
 * A hook is a request the server makes on someone's behalf, so its URL is
 * checked against an allowlist of host patterns when it is registered and
 * again before every delivery (the list may have shrunk since): `host`,
 * `host:port`, or `*.domain` for any subdomain. Only http and https are
 * called, with no credentials in the URL, and redirects are not followed
 * (a redirect could lead anywhere). An empty allowlist allows no hook.
 *
 * An *event* hook receives the graph's events of the kinds it names. A
 * *check* hook is asked, for every new revision of a merge request, to
 * pass or fail it; a protected branch can require named checks to pass on
 * the revision it merges (model/merge-request.ts).
 */
import { z } from 'zod';

export const HOOK_KINDS = ['event', 'check'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

export const CHECK_STATES = ['pending', 'pass', 'fail', 'error'] as const;
export type CheckState = (typeof CHECK_STATES)[number];

export const CHECK_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const HookZ = z.object({
  format: z.literal(1),
  id: z.string(),
  kind: z.enum(HOOK_KINDS),
  url: z.string(),
  /** Event kinds an event hook receives (`*` for all); empty for a check. */
  events: z.array(z.string()),
  /** The check's name, as protection rules require it; only for check hooks. */
  check: z.string().optional(),
  /** The key deliveries are signed with (HMAC-SHA256), never shown again after creation. */
  secret: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
});
export type Hook = z.infer<typeof HookZ>;

/** A hook as clients see it: everything but its secret. */
export type HookView = Omit<Hook, 'format' | 'secret'>;

export function hookView(h: Hook): HookView {
  const { format: _f, secret: _s, ...rest } = h;
  return rest;
}

/** Whether an event hook wants events of `kind`. */
export function hookWants(hook: Hook, kind: string): boolean {
  return hook.kind === 'event' && (hook.events.includes('*') || hook.events.includes(kind));
}

/** Why `url` may not be called under `allowlist` (a malformed URL, or a host the list does not allow); undefined when it may. */
export function hookUrlProblem(url: string, allowlist: readonly string[]): { reason: 'malformed' | 'host'; message: string } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { reason: 'malformed', message: 'is not an absolute URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { reason: 'malformed', message: `uses ${u.protocol.replace(':', '')}; only http and https are called` };
  if (u.username !== '' || u.password !== '')
    return { reason: 'malformed', message: 'carries credentials; deliveries are signed with the hook secret instead' };
  const host = u.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = u.port === '' ? (u.protocol === 'https:' ? '443' : '80') : u.port;
  if (allowlist.some((p) => hostMatches(p, host, port))) return undefined;
  return {
    reason: 'host',
    message:
      allowlist.length === 0
        ? 'cannot be called: the server allows no hook hosts (BRANCHGRAPH_HOOK_ALLOWLIST)'
        : `names host ${host}:${port}, which the server's hook allowlist does not allow`,
  };
}

/**
 * A pattern's host and port (undefined: any port). An IPv6 address takes a port only in brackets
 * (`[::1]:8080`), as in a URL; a bare one (`::1`, `[::1]`) is the address alone.
 */
function patternParts(pattern: string): { name: string; port: string | undefined } {
  const p = pattern.trim().toLowerCase();
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(p);
  if (bracketed !== null) return { name: bracketed[1] as string, port: bracketed[2] };
  const colon = p.lastIndexOf(':');
  const hasPort = colon > 0 && /^\d+$/.test(p.slice(colon + 1)) && !p.slice(0, colon).includes(':');
  return hasPort ? { name: p.slice(0, colon), port: p.slice(colon + 1) } : { name: p, port: undefined };
}

function hostMatches(pattern: string, host: string, port: string): boolean {
  const { name, port: wanted } = patternParts(pattern);
  // A pattern with a port must match the port too.
  if (wanted !== undefined && wanted !== port) return false;
  if (name.startsWith('*.')) return host.endsWith(name.slice(1)) && host.length > name.length - 1;
  return name === host;
}

/** Retry settings: how many attempts a delivery gets and how the waits between them grow. */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

/**
 * How long to wait before attempt `attempt + 1` after `attempt` failed (attempts count from 1):
 * exponential from `baseMs`, capped at `maxMs`, drawn between half that and all of it so many
 * failing deliveries do not retry in step. `random` is in [0, 1).
 */
export function retryDelayMs(attempt: number, policy: RetryPolicy, random: number): number {
  const cap = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(cap / 2 + (cap / 2) * random);
}

/** What a check receiver answers. */
export const CheckAnswerZ = z.object({ status: z.enum(['pass', 'fail']), message: z.string().max(2000).optional() });

/** A check's result on one revision. */
export const CheckResultZ = z.object({
  status: z.enum(CHECK_STATES),
  message: z.string(),
  time: z.string(),
  hook: z.string().optional(),
});
export type CheckResult = z.infer<typeof CheckResultZ>;
