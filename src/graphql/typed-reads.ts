/**
 * One request's reads for the typed API: every lookup and traversal a
 * document asks for goes through a per-request batcher, so all the fields of
 * one level that read the same table the same way become one batched
 * operation (`lookupRows`, `neighbors`), never one call per parent. Each ref
 * resolves once per request (the request's snapshot pins), so nested fields
 * read the same commit as their parents.
 *
 * With `@explain`, each batch runs with a meter, and the store calls and
 * rows read are added up per level: level 1 is the root fields, and each
 * traversal or endpoint hop is one level deeper.
 */
import DataLoader from 'dataloader';
import type { OrderTerm } from '../model/row-filter.js';
import type { Row } from '../model/values.js';
import { invoke, refText, type Ref } from '../service/api.js';
import { OPERATIONS } from '../service/operation-table.js';
import { LIMITS } from '../service/limits.js';
import type { BranchgraphService } from '../service/service.js';
import type { OutputOf } from '../service/operation.js';
import type { ReadMeter, RequestContext } from '../service/request-context.js';

/** An entity as typed fields see it: which table, its key and row, the ref it was read at, and its level. */
export interface Entity {
  table: string;
  key: string;
  row: Row;
  at: string;
  level: number;
}

/** A page of entities as a connection resolves it. */
export interface EntityPage {
  items: (Entity & { cursor: string })[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  totalCount: number | undefined;
}

export interface PageArgs {
  where?: Record<string, unknown> | undefined;
  orderBy?: OrderTerm[] | undefined;
  first: number;
  after?: string | undefined;
  count: boolean;
}

/** Store calls, rows and batches per level, as `@explain` reports them. */
export interface LevelCost {
  level: number;
  batches: number;
  storeCalls: number;
  rowsRead: number;
  /** Distinct run files and segments of tables the level decoded (cached or read): a level's store calls stay within these. */
  segmentsRead: number;
}

const AS_TEXT = (at: string): { at: string } => ({ at });

export class TypedReads {
  private readonly loaders = new Map<string, DataLoader<string, unknown>>();
  private readonly levels = new Map<number, LevelCost>();

  constructor(
    private readonly service: BranchgraphService,
    private readonly ctx: RequestContext,
    /** Whether this request's batches are metered (set when the operation says `@explain`). */
    public explain: boolean,
  ) {}

  /** The ref each pinned read resolved to, by ref text (for the response's extensions). */
  async commits(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const [ref, snap] of this.ctx.pins ?? []) {
      const s = await snap.catch(() => undefined);
      if (s !== undefined) out[refText(JSON.parse(ref) as Ref)] = s.manifest.commit.id;
    }
    return out;
  }

  cost(): LevelCost[] {
    return [...this.levels.values()].sort((a, b) => a.level - b.level);
  }

  /** `work` under a meter when explaining, its cost added to `level`. */
  private async measured<T>(level: number, work: (ctx: RequestContext) => Promise<T>): Promise<T> {
    if (!this.explain) return work(this.ctx);
    const meter: ReadMeter = { storeCalls: 0, rowsRead: 0, segmentsRead: 0 };
    try {
      return await work({ ...this.ctx, meter });
    } finally {
      const c = this.levels.get(level) ?? { level, batches: 0, storeCalls: 0, rowsRead: 0, segmentsRead: 0 };
      c.batches++;
      c.storeCalls += meter.storeCalls;
      c.rowsRead += meter.rowsRead;
      c.segmentsRead += meter.segmentsRead;
      this.levels.set(level, c);
    }
  }

  private loader<V>(id: string, batch: (keys: readonly string[]) => Promise<V[]>): DataLoader<string, V> {
    let l = this.loaders.get(id);
    if (l === undefined) {
      l = new DataLoader<string, unknown>(batch as (keys: readonly string[]) => Promise<unknown[]>, { maxBatchSize: MAX_BATCH });
      this.loaders.set(id, l);
    }
    return l as DataLoader<string, V>;
  }

  /** Answers a plan read ahead (typed-plan.ts), by batch signature and key; a resolver that finds its answer here does not wait. */
  private readonly planned = new Map<string, Map<string, unknown>>();

  private plannedFor(id: string): Map<string, unknown> {
    let m = this.planned.get(id);
    if (m === undefined) {
      m = new Map();
      this.planned.set(id, m);
    }
    return m;
  }

  private lookupBatch(q: { table: string; at: string; level: number }): (keys: readonly string[]) => Promise<(Entity | null)[]> {
    const { table, at, level } = q;
    return (keys) =>
      this.measured(level, async (ctx) => {
        const r = await invoke(OPERATIONS.lookupRows, this.service, { input: { table, ...AS_TEXT(at), keys: [...keys] }, ctx });
        return r.items.map((x) => (x === null ? null : { table, key: x.key, row: x.row as Row, at, level }));
      });
  }

  private neighborsBatch(q: {
    table: string;
    direction: 'out' | 'in';
    at: string;
    level: number;
    page: PageArgs;
  }): (keys: readonly string[]) => Promise<EntityPage[]> {
    const { table, direction, at, level, page } = q;
    return (keys) =>
      this.measured(level, async (ctx) => {
        const input = { table, ...AS_TEXT(at), direction, keys: [...keys], ...askOf(page) };
        const r = await invoke(OPERATIONS.neighbors, this.service, { input, ctx });
        return r.items.map((n) => pageOf(n, { table, at, level, after: page.after }));
      });
  }

  /** One entity by key (null when absent), batched with every lookup of its table, ref and level. */
  lookup(q: { table: string; at: string; key: string; level: number }): Entity | null | Promise<Entity | null> {
    const id = lookupId(q);
    const ready = this.planned.get(id);
    if (ready?.has(q.key)) return ready.get(q.key) as Entity | null;
    return this.loader(id, this.lookupBatch(q)).load(q.key);
  }

  /** A page of a table's entities (a root connection). */
  query(q: { table: string; at: string; page: PageArgs }): Promise<EntityPage> {
    const { table, at, page } = q;
    return this.measured(1, async (ctx) => {
      const r = await invoke(OPERATIONS.queryRows, this.service, { input: { table, ...AS_TEXT(at), ...askOf(page) }, ctx });
      return pageOf(r, { table, at, level: 1, after: page.after });
    });
  }

  /** A search of one table (a root field): its hits best first. */
  search(q: { table: string; at: string; ask: Record<string, unknown> }): Promise<OutputOf<typeof OPERATIONS.search>> {
    return this.measured(1, (ctx) =>
      invoke(OPERATIONS.search, this.service, { input: { table: q.table, ...AS_TEXT(q.at), ...q.ask }, ctx }),
    );
  }

  /** A page of one node's edges, batched with the same traversal from every node of its level. */
  neighbors(q: { edgeTable: string; direction: 'out' | 'in'; from: Entity; page: PageArgs }): EntityPage | Promise<EntityPage> {
    const s = { table: q.edgeTable, direction: q.direction, at: q.from.at, level: q.from.level + 1, page: q.page };
    const id = neighborsId(s);
    const ready = this.planned.get(id);
    if (ready?.has(q.from.key)) return ready.get(q.from.key) as EntityPage;
    return this.loader(id, this.neighborsBatch(s)).load(q.from.key);
  }

  /** A plan's read of one traversal from every node of a level: the pages kept for the resolvers, their items returned. */
  async prefetchNeighbors(q: { edgeTable: string; direction: 'out' | 'in'; from: readonly Entity[]; page: PageArgs }): Promise<Entity[]> {
    const items: Entity[] = [];
    for (const [[at, level], group] of byRefAndLevel(q.from)) {
      const s = { table: q.edgeTable, direction: q.direction, at, level: level + 1, page: q.page };
      const keys = new Set(group.map((e) => e.key));
      const ready = await this.prefetch(neighborsId(s), this.neighborsBatch(s), keys);
      for (const k of keys) for (const item of (ready.get(k) as EntityPage | undefined)?.items ?? []) items.push(item);
    }
    return items;
  }

  /** A plan's read of one end (`from` or `to`) of every edge of a level: the entities kept for the resolvers and returned. */
  async prefetchEnds(q: { table: string; end: 'from' | 'to'; of: readonly Entity[] }): Promise<Entity[]> {
    const found: Entity[] = [];
    for (const [[at, level], group] of byRefAndLevel(q.of)) {
      const s = { table: q.table, at, level: level + 1 };
      const keys = new Set(group.map((e) => e.row[q.end] as string));
      const ready = await this.prefetch(lookupId(s), this.lookupBatch(s), keys);
      for (const k of keys) {
        const e = ready.get(k) as Entity | null | undefined;
        if (e) found.push(e);
      }
    }
    return found;
  }

  /** The planned answers of batch `id`, after reading the `keys` it lacks, at most a batch's worth at a time. */
  private async prefetch<V>(
    id: string,
    batch: (keys: readonly string[]) => Promise<V[]>,
    keys: Set<string>,
  ): Promise<Map<string, unknown>> {
    const ready = this.plannedFor(id);
    const missing = [...keys].filter((k) => !ready.has(k));
    for (let i = 0; i < missing.length; i += MAX_BATCH) {
      const chunk = missing.slice(i, i + MAX_BATCH);
      for (const [n, v] of (await batch(chunk)).entries()) ready.set(chunk[n] as string, v);
    }
    return ready;
  }
}

/** The signatures of batches: a resolver and the plan that reads ahead for it name a batch alike. */
const lookupId = (q: { table: string; at: string; level: number }): string => JSON.stringify(['lookup', q.table, q.at, q.level]);
const neighborsId = (q: { table: string; direction: 'out' | 'in'; at: string; level: number; page: PageArgs }): string =>
  JSON.stringify(['neighbors', q.table, q.direction, q.at, q.level, askOf(q.page)]);

/** Most keys one batch names: the batched operations' own limit. */
const MAX_BATCH = LIMITS.maxBatchKeys;

/** Entities grouped by the ref they were read at and their level: a batch reads one ref at one level. */
function byRefAndLevel(entities: readonly Entity[]): Map<[string, number], Entity[]> {
  const groups = new Map<string, { at: [string, number]; of: Entity[] }>();
  for (const e of entities) {
    const id = `${e.level}:${e.at}`;
    const g = groups.get(id) ?? { at: [e.at, e.level] as [string, number], of: [] };
    g.of.push(e);
    groups.set(id, g);
  }
  return new Map([...groups.values()].map((g) => [g.at, g.of]));
}

function askOf(p: PageArgs): Record<string, unknown> {
  return {
    ...(p.where !== undefined ? { where: p.where } : {}),
    ...(p.orderBy !== undefined ? { orderBy: p.orderBy } : {}),
    first: p.first,
    ...(p.after !== undefined ? { after: p.after } : {}),
    count: p.count,
  };
}

/**
 * An entity of a page, whose cursor stays the engine's lazy one: made only when a document selects
 * it. A class, so the getter lives on the prototype: a getter in an object literal gives every
 * item a hidden class of its own, kept in the old generation, and everything the getter reaches
 * then survives young collections until a full one.
 */
class PagedEntity implements Entity {
  readonly table: string;
  readonly key: string;
  readonly row: Row;
  readonly at: string;
  readonly level: number;
  private readonly item: { cursor: string };

  constructor(item: { key: string; row: Record<string, unknown>; cursor: string }, where: { table: string; at: string; level: number }) {
    this.table = where.table;
    this.key = item.key;
    this.row = item.row as Row;
    this.at = where.at;
    this.level = where.level;
    this.item = item;
  }

  get cursor(): string {
    return this.item.cursor;
  }
}

function pageOf(
  r: { items: { key: string; row: Record<string, unknown>; cursor: string }[]; hasNextPage: boolean; totalCount?: number },
  where: { table: string; at: string; level: number; after: string | undefined },
): EntityPage {
  return {
    items: r.items.map((i) => new PagedEntity(i, where)),
    hasNextPage: r.hasNextPage,
    hasPreviousPage: where.after !== undefined,
    totalCount: r.totalCount,
  };
}
