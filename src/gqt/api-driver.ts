/**
 * GQT over any `BranchgraphApi`: the engine in this process, or REST. The
 * case steps map one to one onto API calls; what differs between
 * transports is only where the API comes from and what a restart does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BranchgraphError } from '../model/errors.js';
import { allRows, type BranchgraphApi, type RefInput } from '../service/api.js';
import { cloneStores } from '../service/clone-stores.js';
import type { CatchUpInput, MergeInput, ApplyCommitInput } from '../service/api.js';
import { allPages, GQT_PAGE, refString, type DriverRef, type EntityAt, type RequestView, type TypedAnswer } from './gqt-driver.js';
import type { LogQuery, RequestAction } from './gqt-case.js';
import type { ProtectionRule } from '../model/branch-protection.js';
import type { WriteLine } from './gqt-parser.js';

/** Where a driver's API lives: `restart` drops everything but what the store holds. */
export interface ApiHost {
  api(): BranchgraphApi;
  typedGraphql(branch: string, query: string): Promise<TypedAnswer>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function toRef(at: DriverRef): RefInput {
  // Steps back through history and remote-tracking refs have no object form: the ref goes as its text.
  if (at.steps !== undefined || at.remote !== undefined) return refString(at);
  return at.commit !== undefined ? { commit: at.commit } : at.tag !== undefined ? { tag: at.tag } : { branch: at.branch ?? 'main' };
}

/** What a GQT case runs on: one driver, whatever the transport. */
export type GqtDriver = ApiDriver;

export class ApiDriver {
  /** The directories this driver's remotes and clones live in, removed when it closes. */
  private readonly dirs: string[] = [];

  constructor(
    readonly name: string,
    private readonly host: ApiHost,
  ) {}

  private get api(): BranchgraphApi {
    return this.host.api();
  }

  typedGraphql(branch: string, query: string): Promise<TypedAnswer> {
    return this.host.typedGraphql(branch, query);
  }

  async applySchema(branch: string, text: string): Promise<void> {
    await this.api.applySchema({ branch, schema: text });
  }

  async write(branch: string, ops: WriteLine[]): Promise<void> {
    await this.api.write({ branch, ops });
  }

  async ingest(branch: string, ops: WriteLine[]): Promise<void> {
    await this.api.ingest({ branch, ndjson: ops.map((o) => JSON.stringify(o)).join('\n') });
  }

  async catchUp(branch: string, input: CatchUpInput): Promise<void> {
    await this.api.catchUp({ branch, ...input });
  }

  async pendingGenerations(branch: string): Promise<number> {
    return (await this.api.walStatus({ branch })).pendingGenerations;
  }

  async createTag(name: string, from: DriverRef): Promise<void> {
    await this.api.createTag({ name, from: toRef(from) });
  }

  async createBranch(name: string, from: DriverRef): Promise<void> {
    await this.api.createBranch({ name, from: toRef(from) });
  }

  async deleteBranch(name: string): Promise<void> {
    await this.api.deleteBranch({ name });
  }

  applyCommit(kind: 'cherry_pick' | 'revert', branch: string, input: ApplyCommitInput) {
    return kind === 'revert' ? this.api.revert({ ...input, branch }) : this.api.cherryPick({ ...input, branch });
  }

  merge(source: string, input: MergeInput) {
    return this.api.mergeBranch({ ...input, source });
  }

  rows(table: string, at: DriverRef) {
    return allRows(this.api, table, toRef(at));
  }

  diff(from: DriverRef, to: DriverRef, mode: 'two-dot' | 'three-dot') {
    return this.api.diff({ from: toRef(from), to: toRef(to), mode });
  }

  async schemaText(at: DriverRef): Promise<string> {
    return (await this.api.getSchema({ at: toRef(at) })).text;
  }

  log(at: DriverRef, query: LogQuery) {
    return allPages(async (cursor) => {
      const p = await this.api.log({ ...query, at: toRef(at), limit: GQT_PAGE, ...(cursor ? { cursor } : {}) });
      return { items: p.commits, nextCursor: p.nextCursor };
    });
  }

  history(e: EntityAt) {
    return allPages(async (cursor) => {
      const p = await this.api.entityHistory({ ...e, at: toRef(e.at), limit: GQT_PAGE, ...(cursor ? { cursor } : {}) });
      return { items: p.versions, nextCursor: p.nextCursor };
    });
  }

  async blame(e: EntityAt) {
    return (await this.api.blame({ table: e.table, key: e.key, at: toRef(e.at) })).properties;
  }

  async search(q: { table: string; at: DriverRef; ask: Record<string, unknown> }): Promise<{ key: string; score: number }[]> {
    return (await this.api.search({ table: q.table, at: toRef(q.at), ...q.ask })).hits;
  }

  /** Set a branch's protection rule, or remove it (null). Cases register no check hooks, so they require none. */
  async protect(branch: string, rule: Omit<ProtectionRule, 'requiredChecks'> | null): Promise<void> {
    await (rule === null ? this.api.unprotectBranch({ name: branch }) : this.api.protectBranch({ name: branch, ...rule }));
  }

  async request(
    call: (RequestAction | { action: 'get' }) & { id?: string; title?: string },
  ): Promise<{ view: RequestView; outcome?: string }> {
    const id = call.id ?? '';
    switch (call.action) {
      case 'get':
        return { view: await this.api.getMergeRequest({ id }) };
      case 'open':
        return { view: await this.api.openMergeRequest({ source: call.source, target: call.target, title: call.title ?? 'request' }) };
      case 'revise':
        return { view: await this.api.reviseMergeRequest({ id }) };
      case 'close':
        return { view: await this.api.closeMergeRequest({ id }) };
      case 'review':
        return { view: await this.api.reviewMergeRequest({ id, verdict: call.verdict }) };
      case 'resolve':
        return {
          view: await this.api.setMergeRequestResolutions({ id, resolutions: call.strategy === null ? null : { strategy: call.strategy } }),
        };
      case 'merge': {
        const r = await this.api.mergeMergeRequest({ id, deleteBranch: call.deleteBranch });
        return { view: r.request, ...(r.result.status === 'success' ? { outcome: r.result.outcome } : { outcome: 'conflicts' }) };
      }
    }
  }

  /** Add a remote at a new, empty directory of this driver's own. */
  async addRemote(name: string): Promise<void> {
    const dir = await mkdtemp(path.join(tmpdir(), `gqt-remote-${name}-`));
    this.dirs.push(dir);
    await this.api.setRemote({ name, url: dir });
  }

  async fetch(remote: string, prune: boolean): Promise<number> {
    return (await this.api.fetchRemote({ remote, prune })).updated.length;
  }

  async push(p: { remote: string; branch: string; destination?: string | undefined; lease?: DriverRef | 'none' }): Promise<string> {
    const lease =
      p.lease === undefined
        ? {}
        : { forceWithLease: p.lease === 'none' ? '' : (p.lease.commit ?? (await this.head(p.lease.branch ?? 'main'))) };
    const r = await this.api.pushBranch({
      remote: p.remote,
      branch: p.branch,
      ...(p.destination !== undefined ? { destination: p.destination } : {}),
      ...lease,
    });
    return r.outcome;
  }

  /** Clone a remote's store into a new directory, as `branchgraph clone` does, and add the copy as the remote `as`. */
  async clone(remote: string, as: string): Promise<void> {
    const url = (await this.api.listRemotes({})).remotes.find((r) => r.name === remote)?.url;
    if (url === undefined) throw new BranchgraphError('not_found', `remote ${remote} does not exist`, { details: { remote } });
    const dir = await mkdtemp(path.join(tmpdir(), `gqt-clone-${as}-`));
    this.dirs.push(dir);
    await cloneStores({ source: url, destination: dir, actor: 'gqt' });
    await this.api.setRemote({ name: as, url: dir });
  }

  async reset(branch: string, to: DriverRef): Promise<void> {
    const head = await this.head(branch);
    await this.api.resetBranch({ name: branch, to: toRef(to), expectedHead: head });
  }

  async head(branch: string): Promise<string> {
    return (await this.api.getBranch({ name: branch })).head.id;
  }

  restart(): Promise<void> {
    return this.host.restart();
  }

  async close(): Promise<void> {
    await this.host.close();
    await Promise.all(this.dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  }
}
