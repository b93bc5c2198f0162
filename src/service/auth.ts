/**
 * Bearer-token roles. `read` < `write` < `admin`: reads need read, writes and
 * merges need write, schema changes and GC need admin. With no tokens
 * configured the server is open (every caller is admin), which is the
 * embedded default on one machine.
 */
import { BranchgraphError } from '../model/errors.js';

export const ROLES = ['read', 'write', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export type TokenTable = ReadonlyMap<string, Role>;

/** Parse `role:token,role:token`. */
export function parseTokens(spec: string | undefined): { tokens: Map<string, Role>; problems: string[] } {
  const tokens = new Map<string, Role>();
  const problems: string[] = [];
  if (spec === undefined || spec.trim() === '') return { tokens, problems };
  for (const [i, part] of spec.split(',').entries()) {
    const [role, token] = part.trim().split(':');
    if (!ROLES.includes(role as Role) || token === undefined || token.length < 8) {
      problems.push(`tokens[${i}]: expected role:token with role read, write or admin and a token of at least 8 characters`);
      continue;
    }
    tokens.set(token, role as Role);
  }
  return { tokens, problems };
}

/** The caller's role from an Authorization header. */
export function authenticate(header: string | undefined, tokens: TokenTable): Role {
  if (tokens.size === 0) return 'admin';
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  const role = m === null ? undefined : tokens.get(m[1] as string);
  if (role === undefined) throw new BranchgraphError('unauthorized', 'a valid bearer token is required');
  return role;
}

export function requireRole(have: Role, need: Role): void {
  if (ROLES.indexOf(have) < ROLES.indexOf(need)) throw new BranchgraphError('forbidden', `this operation needs the ${need} role; the token has ${have}`);
}
