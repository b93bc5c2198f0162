/**
 * DNS rebinding: a page on another site can point its own host name at
 * 127.0.0.1 and have the browser send requests to a server that trusts
 * loopback. A server bound to loopback therefore answers MCP only when the
 * request's `Host` names loopback, and any `Origin` does too; a server
 * bound to another address is reached by name and relies on its tokens.
 * Pure: no I/O.
 */

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackAddress(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The host name of a `Host` header or an origin (`http://localhost:8080`), lowercased, without the port. */
function hostName(value: string): string | undefined {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Why a request may not reach a loopback-bound server, or undefined when it may. */
export function foreignHost(r: { bound: string; host: string | undefined; origin: string | undefined }): string | undefined {
  if (!isLoopbackAddress(r.bound)) return undefined;
  const host = r.host === undefined ? undefined : hostName(r.host);
  if (host === undefined || !isLoopbackAddress(host)) return `Host ${JSON.stringify(r.host ?? '')} is not this loopback server`;
  if (r.origin === undefined || r.origin === 'null') return r.origin === 'null' ? 'an opaque Origin may not call this server' : undefined;
  const origin = hostName(r.origin);
  if (origin === undefined || !isLoopbackAddress(origin)) return `Origin ${JSON.stringify(r.origin)} is not this loopback server`;
  return undefined;
}
