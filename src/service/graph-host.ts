/**
 * The graphs one server hosts in one store: the default graph at the
 * store's root, and named graphs, each under `graphs/<name>/i-<incarnation>/`
 * with a service of its own (its own caches, WAL writer and catch-up).
 *
 * A named graph exists while its registry entry `hosted-graphs/<name>.json`
 * does. The entry names the graph's incarnation (a ULID made at creation),
 * and every key the graph writes lives under that incarnation's prefix, so
 * a graph deleted and created again is a new graph in every process: a
 * process still holding the old one writes where nobody reads.
 *
 * Creating one writes the entry create-only (so two creators cannot both
 * win), clears what older incarnations left under the name, then opens the
 * graph, which creates its `main`. Deleting one removes the entry first, so
 * the graph stops existing at once, then every object under its name; a
 * deletion that stopped half-way is finished by deleting the name again.
 *
 * Other processes learn of a deletion without any message: every request
 * reads the entry before it is served (one small read), and every
 * publication reads it again before it is acknowledged (live-graph-store.ts),
 * so no process acknowledges anything for a deleted graph. Graphs created
 * before incarnations existed keep their entry without one and their keys
 * directly under `graphs/<name>/`. The default graph never lists, reads or
 * collects keys under these prefixes.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { getIfPresent, type ObjectStore } from '../store/object-store.js';
import { PrefixStore } from '../store/prefix-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { z } from 'zod';
import { LiveGraphStore } from './live-graph-store.js';
import { GRAPH_NAME_RE } from './inputs.js';
import type { BranchgraphService } from './service.js';
import { newId } from '../model/new-id.js';

export { GRAPH_NAME_RE } from './inputs.js';
const REGISTRY = 'hosted-graphs/';
const namePrefix = (name: string): string => `graphs/${name}/`;
/** Where one incarnation's keys live; an entry from before incarnations keeps its keys right under the name. */
const dataPrefix = (name: string, incarnation: string | undefined): string =>
  incarnation === undefined ? namePrefix(name) : `${namePrefix(name)}i-${incarnation}/`;
const entryKey = (name: string): string => `${REGISTRY}${name}.json`;
const EntryZ = z.object({ name: z.string(), created: z.string(), incarnation: z.string().optional() });
type Entry = z.infer<typeof EntryZ>;
const DELETE_BATCH = 1000;

const gone = (name: string): BranchgraphError =>
  new BranchgraphError('not_found', `graph ${name} does not exist`, { details: { graph: name } });

/** A named graph: its name and when it was created. */
export interface HostedGraph {
  name: string;
  created: string;
}

export function validateGraphName(name: string): void {
  if (!GRAPH_NAME_RE.test(name)) {
    throw new BranchgraphError(
      'invalid_input',
      `graph name ${JSON.stringify(name.slice(0, 80))} must be 1-63 of a-z 0-9 _ - and start with a letter or digit`,
      {
        issues: [{ path: 'name', message: 'invalid graph name' }],
      },
    );
  }
}

/** The default graph and the named graphs one server hosts in one store, each named graph with its own service. */
export class GraphHost {
  /** Open services by graph name, each with the incarnation it serves. */
  private readonly services = new Map<string, { incarnation: string | undefined; service: Promise<BranchgraphService> }>();

  /** The default graph, at the store's root. */
  readonly root: BranchgraphService;
  readonly store: ObjectStore;
  private readonly open: (store: ObjectStore) => Promise<BranchgraphService>;
  private readonly clock: () => number;

  constructor(h: {
    root: BranchgraphService;
    store: ObjectStore;
    open: (store: ObjectStore) => Promise<BranchgraphService>;
    clock?: () => number;
  }) {
    ({ root: this.root, store: this.store, open: this.open } = h);
    this.clock = h.clock ?? Date.now;
  }

  async list(signal?: AbortSignal): Promise<HostedGraph[]> {
    const out: HostedGraph[] = [];
    for await (const o of this.store.list(REGISTRY, { signal })) {
      const e = await this.readEntry(o.key, signal);
      if (e !== undefined) out.push({ name: e.name, created: e.created });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async create(name: string, signal?: AbortSignal): Promise<HostedGraph> {
    validateGraphName(name);
    const entry: Entry = { name, created: new Date(this.clock()).toISOString(), incarnation: newId(this.clock()) };
    try {
      await this.store.putIfAbsent(entryKey(name), encodeJson(entry), { signal });
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists'))
        throw new BranchgraphError('graph_exists', `graph ${name} already exists`, { details: { graph: name } });
      throw e;
    }
    // What older incarnations left; the new one's prefix is spared, since another process may already be opening it.
    await this.clear(namePrefix(name), dataPrefix(name, entry.incarnation), signal);
    await this.service(name, signal);
    return { name, created: entry.created };
  }

  async delete(name: string, signal?: AbortSignal): Promise<{ deleted: string }> {
    validateGraphName(name);
    const existed = (await this.store.head(entryKey(name), { signal })) !== undefined;
    await this.store.deleteMany([entryKey(name)], { signal });
    this.evict(name);
    const cleared = await this.clear(namePrefix(name), undefined, signal);
    if (!existed && cleared === 0) throw gone(name);
    return { deleted: name };
  }

  /**
   * The service of a named graph, `not_found` unless the graph exists now. The registry entry is
   * read on every call, so a graph another process deleted or created again is never served from
   * this process's caches: a new incarnation gets a new service, and the old one is closed.
   */
  async service(name: string, signal?: AbortSignal): Promise<BranchgraphService> {
    validateGraphName(name);
    const entry = await this.readEntry(entryKey(name), signal);
    if (entry === undefined) {
      this.evict(name);
      throw gone(name);
    }
    const open = this.services.get(name);
    if (open !== undefined && open.incarnation === entry.incarnation) return open.service;
    if (open !== undefined) this.evict(name);
    const { incarnation } = entry;
    const store = new LiveGraphStore(new PrefixStore(this.store, dataPrefix(name, incarnation)), (sig) =>
      this.assertLive(name, incarnation, sig),
    );
    const opening = this.open(store).then(async (service) => {
      // A hosted graph runs its background work (the catch-up trigger) as the default graph does.
      await service.start();
      return service;
    });
    this.services.set(name, { incarnation, service: opening });
    // A failed open is not remembered: the next request tries again.
    opening.catch(() => {
      if (this.services.get(name)?.service === opening) this.services.delete(name);
    });
    return opening;
  }

  async close(): Promise<void> {
    const open = [...this.services.values()];
    this.services.clear();
    await Promise.all(open.map((o) => o.service.then((s) => s.close()).catch(() => undefined)));
  }

  /** Throw `not_found` unless the graph's entry still names `incarnation` (after every publication, see live-graph-store.ts). */
  private async assertLive(name: string, incarnation: string | undefined, signal?: AbortSignal): Promise<void> {
    const entry = await this.readEntry(entryKey(name), signal);
    if (entry !== undefined && entry.incarnation === incarnation) return;
    this.evict(name, incarnation);
    // What the dead incarnation wrote after its deletion was cleared is nobody's: remove it, best effort.
    if (incarnation !== undefined) void this.clear(dataPrefix(name, incarnation), undefined).catch(() => undefined);
    throw new BranchgraphError(
      'not_found',
      `graph ${name} was deleted${entry !== undefined ? ' and created again' : ''}; nothing was acknowledged`,
      { details: { graph: name } },
    );
  }

  /** Forget (and close, in the background) the open service of `name`, if it serves `incarnation` (any, when not given). */
  private evict(name: string, incarnation?: string): void {
    const open = this.services.get(name);
    if (open === undefined || (incarnation !== undefined && open.incarnation !== incarnation)) return;
    this.services.delete(name);
    void open.service.then((s) => s.close()).catch(() => undefined);
  }

  /** Delete every object under `prefix` but those under `keep`; returns how many there were. */
  private async clear(prefix: string, keep: string | undefined, signal?: AbortSignal): Promise<number> {
    let n = 0;
    let batch: string[] = [];
    for await (const o of this.store.list(prefix, { signal })) {
      if (keep !== undefined && o.key.startsWith(keep)) continue;
      batch.push(o.key);
      if (batch.length >= DELETE_BATCH) {
        await this.store.deleteMany(batch, { signal });
        n += batch.length;
        batch = [];
      }
    }
    if (batch.length > 0) await this.store.deleteMany(batch, { signal });
    return n + batch.length;
  }

  /** A registry entry, or undefined when it does not exist. */
  private async readEntry(key: string, signal?: AbortSignal): Promise<Entry | undefined> {
    const bytes = await getIfPresent(this.store, key, { signal });
    return bytes === undefined ? undefined : decodeJson(EntryZ, bytes, key);
  }
}
