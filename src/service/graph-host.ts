/**
 * The graphs one server hosts in one store: the default graph at the
 * store's root, and named graphs, each under `graphs/<name>/` with a
 * service of its own (its own caches, WAL writer and catch-up).
 *
 * A named graph exists while its registry entry `hosted-graphs/<name>.json`
 * does. Creating one writes the entry create-only (so two creators cannot
 * both win), clears anything a half-finished deletion left under the
 * prefix, then opens the graph, which creates its `main`. Deleting one
 * removes the entry first, so the graph stops existing at once, then every
 * object under its prefix; a deletion that stopped half-way is finished by
 * deleting the name again. The default graph never lists, reads or
 * collects keys under these prefixes.
 */
import { BranchgraphError } from '../model/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { PrefixStore } from '../store/prefix-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { z } from 'zod';
import type { BranchgraphService } from './service.js';

export const GRAPH_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const REGISTRY = 'hosted-graphs/';
const dataPrefix = (name: string): string => `graphs/${name}/`;
const entryKey = (name: string): string => `${REGISTRY}${name}.json`;
const EntryZ = z.object({ name: z.string(), created: z.string() });
const DELETE_BATCH = 1000;

/** A named graph: its name and when it was created. */
export interface HostedGraph {
  name: string;
  created: string;
}

export function validateGraphName(name: string): void {
  if (!GRAPH_NAME_RE.test(name)) {
    throw new BranchgraphError('invalid_input', `graph name ${JSON.stringify(name.slice(0, 80))} must be 1-63 of a-z 0-9 _ - and start with a letter or digit`, {
      issues: [{ path: 'name', message: 'invalid graph name' }],
    });
  }
}

/** The default graph and the named graphs one server hosts in one store, each named graph with its own service. */
export class GraphHost {
  private readonly services = new Map<string, Promise<BranchgraphService>>();

  constructor(
    /** The default graph, at the store's root. */
    readonly root: BranchgraphService,
    private readonly store: ObjectStore,
    private readonly open: (store: ObjectStore) => Promise<BranchgraphService>,
    private readonly clock: () => number = Date.now,
  ) {}

  async list(signal?: AbortSignal): Promise<HostedGraph[]> {
    const out: HostedGraph[] = [];
    for await (const o of this.store.list(REGISTRY, { signal })) {
      out.push(await this.entry(o.key, signal));
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async create(name: string, signal?: AbortSignal): Promise<HostedGraph> {
    validateGraphName(name);
    const entry: HostedGraph = { name, created: new Date(this.clock()).toISOString() };
    try {
      await this.store.putIfAbsent(entryKey(name), encodeJson(entry), { signal });
    } catch (e) {
      if (e instanceof BranchgraphError && e.code === 'object_exists') throw new BranchgraphError('graph_exists', `graph ${name} already exists`, { details: { graph: name } });
      throw e;
    }
    await this.clear(name, signal);
    await this.service(name, signal);
    return entry;
  }

  async delete(name: string, signal?: AbortSignal): Promise<{ deleted: string }> {
    validateGraphName(name);
    const existed = (await this.store.head(entryKey(name), { signal })) !== undefined;
    await this.store.deleteMany([entryKey(name)], { signal });
    const open = this.services.get(name);
    this.services.delete(name);
    await open?.then((s) => s.close()).catch(() => undefined);
    const cleared = await this.clear(name, signal);
    if (!existed && cleared === 0) throw new BranchgraphError('not_found', `graph ${name} does not exist`, { details: { graph: name } });
    return { deleted: name };
  }

  /** The service of a named graph, opened on first use; `not_found` unless the graph was created. */
  service(name: string, signal?: AbortSignal): Promise<BranchgraphService> {
    const open = this.services.get(name);
    if (open !== undefined) return open;
    const opening = (async () => {
      validateGraphName(name);
      if ((await this.store.head(entryKey(name), { signal })) === undefined) throw new BranchgraphError('not_found', `graph ${name} does not exist`, { details: { graph: name } });
      const service = await this.open(new PrefixStore(this.store, dataPrefix(name)));
      // A hosted graph runs its background work (the catch-up trigger) as the default graph does.
      service.start();
      return service;
    })();
    this.services.set(name, opening);
    // A failed open is not remembered: the next request tries again.
    opening.catch(() => {
      if (this.services.get(name) === opening) this.services.delete(name);
    });
    return opening;
  }

  async close(): Promise<void> {
    const open = [...this.services.values()];
    this.services.clear();
    await Promise.all(open.map((p) => p.then((s) => s.close()).catch(() => undefined)));
  }

  /** Delete every object under the graph's prefix; returns how many there were. */
  private async clear(name: string, signal?: AbortSignal): Promise<number> {
    let n = 0;
    let batch: string[] = [];
    for await (const o of this.store.list(dataPrefix(name), { signal })) {
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

  private async entry(key: string, signal?: AbortSignal): Promise<HostedGraph> {
    return decodeJson(EntryZ, await this.store.get(key, { signal }), key);
  }
}
