/**
 * Managed tokens: bearer tokens an admin creates and revokes through the
 * API, each with a role and a scope (model/token-scope.ts), kept in the
 * store so that every replica honours a new token or a revocation on its
 * very next request.
 *
 * A token's text is `bg_<id>_<secret>`. The store keeps `tokens/<id>.json`
 * with the secret's scrypt hash and salt, never the secret, which is shown
 * once, when the token is created. Authenticating reads the record (one
 * small read: so a revocation, which deletes it, counts at once) and checks
 * the secret against the hash; a secret already checked against that very
 * record is remembered by its SHA-256, so scrypt's deliberate cost (about
 * 50 ms, off the event loop) is paid once per token and process, not per
 * request.
 */
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { z } from 'zod';
import { BranchgraphError } from '../model/errors.js';
import { newId } from '../model/new-id.js';
import { getIfPresent, type ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { ROLES, type Grant, type TokenVerifier } from './auth.js';

const scrypt = promisify(scryptCallback) as (secret: string, salt: Buffer, keylen: number, opts: object) => Promise<Buffer>;

/** scrypt's cost: N = 2^14, r = 8 (16 MiB, tens of milliseconds), as OWASP recommends at least. */
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_BYTES = 32;
const TOKENS_PREFIX = 'tokens/';
const tokenKey = (id: string): string => `${TOKENS_PREFIX}${id}.json`;
const TOKEN_RE = /^bg_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{43})$/;
/** Checked secrets remembered per process, at most. */
const REMEMBERED = 10_000;

export const TokenRecordZ = z.object({
  format: z.literal(1),
  id: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  graphs: z.array(z.string()).optional(),
  read: z.array(z.string()).optional(),
  write: z.array(z.string()).optional(),
  maxBranches: z.number().int().optional(),
  expiresAt: z.string().optional(),
  createdAt: z.string(),
  createdBy: z.string(),
  salt: z.string(),
  hash: z.string(),
});
export type TokenRecord = z.infer<typeof TokenRecordZ>;

/** What creating a token takes: its name (the identity its commits record), role and scope. */
export type TokenSpec = Pick<TokenRecord, 'name' | 'role' | 'graphs' | 'read' | 'write' | 'maxBranches' | 'expiresAt'>;

export class ManagedTokens implements TokenVerifier {
  private readonly checked = new Set<string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Does this bearer text have a managed token's shape (so it is judged here, not against the bootstrap tokens)? */
  owns(text: string): boolean {
    return TOKEN_RE.test(text);
  }

  /** Create a token; the answer holds its secret text, which is never shown again. */
  async create(spec: TokenSpec, by: { actor: string; signal?: AbortSignal }): Promise<{ record: TokenRecord; token: string }> {
    const id = newId(this.clock());
    const secret = randomBytes(32).toString('base64url');
    const salt = randomBytes(16);
    const hash = await scrypt(secret, salt, KEY_BYTES, SCRYPT);
    const record: TokenRecord = {
      format: 1,
      id,
      ...spec,
      createdAt: new Date(this.clock()).toISOString(),
      createdBy: by.actor,
      salt: salt.toString('base64'),
      hash: hash.toString('base64'),
    };
    await this.store.putIfAbsent(tokenKey(id), encodeJson(record), { signal: by.signal });
    return { record, token: `bg_${id}_${secret}` };
  }

  /** Every token, newest first. */
  async list(signal?: AbortSignal): Promise<TokenRecord[]> {
    const out: TokenRecord[] = [];
    for await (const o of this.store.list(TOKENS_PREFIX, { signal })) {
      const r = await this.read(o.key, signal);
      if (r !== undefined) out.push(r);
    }
    return out.sort((a, b) => (a.id < b.id ? 1 : -1));
  }

  /** Revoke a token: its record goes, and with it every replica's next request with it. */
  async revoke(id: string, signal?: AbortSignal): Promise<TokenRecord> {
    const rec = await this.read(tokenKey(id), signal);
    if (rec === undefined) throw new BranchgraphError('not_found', `no token ${id}`);
    await this.store.deleteMany([tokenKey(id)], { signal });
    return rec;
  }

  /** The grant of a managed token's text, or `unauthorized` (unknown, revoked, expired or wrong secret). */
  async authenticate(text: string, signal?: AbortSignal): Promise<Grant> {
    const m = TOKEN_RE.exec(text);
    const bad = (): BranchgraphError => new BranchgraphError('unauthorized', 'a valid bearer token is required');
    if (m === null) throw bad();
    const [, id, secret] = m as unknown as [string, string, string];
    const rec = await this.read(tokenKey(id), signal);
    if (rec === undefined) throw bad();
    if (rec.expiresAt !== undefined && Date.parse(rec.expiresAt) <= this.clock())
      throw new BranchgraphError('unauthorized', 'this token has expired');
    const seen = `${rec.id}:${rec.hash}:${createHash('sha256').update(secret).digest('base64')}`;
    if (!this.checked.has(seen)) {
      const got = await scrypt(secret, Buffer.from(rec.salt, 'base64'), KEY_BYTES, SCRYPT);
      if (!timingSafeEqual(got, Buffer.from(rec.hash, 'base64'))) throw bad();
      if (this.checked.size >= REMEMBERED) this.checked.clear();
      this.checked.add(seen);
    }
    return {
      role: rec.role,
      identity: rec.name,
      scope: {
        ...(rec.graphs !== undefined ? { graphs: rec.graphs } : {}),
        ...(rec.read !== undefined ? { read: rec.read } : {}),
        ...(rec.write !== undefined ? { write: rec.write } : {}),
        ...(rec.maxBranches !== undefined ? { maxBranches: rec.maxBranches } : {}),
      },
    };
  }

  private async read(key: string, signal?: AbortSignal): Promise<TokenRecord | undefined> {
    const bytes = await getIfPresent(this.store, key, { signal });
    return bytes === undefined ? undefined : decodeJson(TokenRecordZ, bytes, key);
  }
}
