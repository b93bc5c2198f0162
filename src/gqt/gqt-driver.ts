/**
 * What GQT's one driver (api-driver.ts) shares with the runner: refs as a
 * case names them, paging, and the shapes it checks. The driver runs a case
 * over any `BranchgraphApi` (the engine in this process, or the REST or
 * GraphQL client of a server, each derived from the operation table), so
 * an operation needs no driver code of its own per transport.
 */

/** Commits or versions per page when a driver reads a whole log or history: small, so every case pages through cursors. */
export const GQT_PAGE = 3;

/** One entity at a ref, as history and blame read it. */
export interface EntityAt {
  table: string;
  key: string;
  at: DriverRef;
  firstParent?: boolean;
}

export interface DriverRef {
  branch?: string;
  commit?: string;
  tag?: string;
  /** A remote-tracking ref, `REMOTE/BRANCH`. */
  remote?: string;
  /** Steps back from there (`~1^2`), as the ref grammar spells them. */
  steps?: string;
}

/** A merge request as GQT checks it. */
export interface RequestView {
  id: string;
  state: string;
  revisions: { preview: { outcome: string; conflicts: number } }[];
  mergeability: { mergeable: boolean; reasons: string[] };
}

/** A GraphQL response as the typed step reads it. */
export interface TypedAnswer {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** POST a document to a branch's typed endpoint under `base` (a server, or a hosted graph on one). */
export async function postTyped(base: string, branch: string, query: string): Promise<TypedAnswer> {
  const res = await fetch(`${base}/branches/${encodeURIComponent(branch)}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as TypedAnswer & { error?: { code: string; message: string } };
  // A REST error envelope (an unknown branch, a refused token) reads as one error with its code.
  return body.error !== undefined ? { errors: [{ message: body.error.message, extensions: { code: body.error.code } }] } : body;
}

export function refString(at: DriverRef): string {
  const base =
    at.commit !== undefined
      ? `commit:${at.commit}`
      : at.tag !== undefined
        ? `tag:${at.tag}`
        : at.remote !== undefined
          ? `remote:${at.remote}`
          : (at.branch ?? 'main');
  return base + (at.steps ?? '');
}

/** Every item of a paged read: `page` answers one page from a cursor. */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    out.push(...p.items);
    cursor = p.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}
