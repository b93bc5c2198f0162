import type { z } from 'zod';
import type { TokenRecord } from '../../managed-tokens.js';
import type { TokenZ } from '../../results/token.js';

/** A stored token as clients see it: its scope, never its hash. */
export function tokenDto(r: TokenRecord): z.input<typeof TokenZ> {
  return {
    id: r.id,
    name: r.name,
    role: r.role,
    graphs: r.graphs ?? null,
    read: r.read ?? null,
    write: r.write ?? null,
    maxBranches: r.maxBranches ?? null,
    expiresAt: r.expiresAt ?? null,
    createdAt: r.createdAt,
    createdBy: r.createdBy,
  };
}
