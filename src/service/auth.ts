/**
 * Bearer-token roles. `read` < `write` < `admin`: reads need read, writes and
 * merges need write, schema changes and GC need admin. With no tokens
 * configured the server is open (every caller is admin), which is the
 * embedded default on one machine.
 */
import { createHash } from 'node:crypto';
import { BranchgraphError } from '../model/errors.js';
import type { TokenScope } from '../model/token-scope.js';

export const ROLES = ['read', 'write', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** What a token grants: a role, the identity commits made with it record as their actor, and (managed tokens) a scope. */
export interface Grant {
  role: Role;
  identity: string;
  scope?: TokenScope;
}

export type TokenTable = ReadonlyMap<string, Grant>;

/** Tokens judged elsewhere than the bootstrap table (managed-tokens.ts): those whose text it owns. */
export interface TokenVerifier {
  owns(text: string): boolean;
  authenticate(text: string, signal?: AbortSignal): Promise<Grant>;
}

const IDENTITY_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/**
 * Parse `role:token[:identity],...`. Without an identity a token is known
 * as `<role>-<first 8 hex digits of its SHA-256>`: stable, and never the
 * token itself.
 */
export function parseTokens(spec: string | undefined): { tokens: Map<string, Grant>; problems: string[] } {
  const tokens = new Map<string, Grant>();
  const problems: string[] = [];
  if (spec === undefined || spec.trim() === '') return { tokens, problems };
  for (const [i, part] of spec.split(',').entries()) {
    const [role, token, identity, ...rest] = part.trim().split(':');
    if (
      !ROLES.includes(role as Role) ||
      token === undefined ||
      token.length < 8 ||
      rest.length > 0 ||
      (identity !== undefined && !IDENTITY_RE.test(identity))
    ) {
      problems.push(
        `tokens[${i}]: expected role:token[:identity] with role read, write or admin, a token of at least 8 characters and an identity of letters, digits, '.', '_', '@' or '-'`,
      );
      continue;
    }
    tokens.set(token, {
      role: role as Role,
      identity: identity ?? `${role}-${createHash('sha256').update(token).digest('hex').slice(0, 8)}`,
    });
  }
  return { tokens, problems };
}

/**
 * The caller's grant from an Authorization header: a bootstrap token (`--tokens`), or a managed
 * one (managed-tokens.ts), checked against the store. With no bootstrap tokens configured the
 * server is open and an anonymous caller is an admin; a managed token presented there still
 * carries its role and scope, and a bad one is still refused.
 */
export async function authenticate(
  header: string | undefined,
  tokens: { bootstrap: TokenTable; managed?: TokenVerifier | undefined; signal?: AbortSignal | undefined },
): Promise<Grant | { role: 'admin'; identity: undefined }> {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  const text = m?.[1];
  if (text !== undefined && tokens.managed?.owns(text) === true) return tokens.managed.authenticate(text, tokens.signal);
  if (tokens.bootstrap.size === 0) return { role: 'admin', identity: undefined };
  const grant = text === undefined ? undefined : tokens.bootstrap.get(text);
  if (grant === undefined) throw new BranchgraphError('unauthorized', 'a valid bearer token is required');
  return grant;
}

export function requireRole(have: Role, need: Role): void {
  if (ROLES.indexOf(have) < ROLES.indexOf(need))
    throw new BranchgraphError('forbidden', `this operation needs the ${need} role; the token has ${have}`);
}
