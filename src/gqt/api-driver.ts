/**
 * GQT over any `BranchgraphApi`: the engine in this process, or REST. The
 * case steps map one to one onto API calls; what differs between
 * transports is only where the API comes from and what a restart does.
 */
import { allRows, type BranchgraphApi, type RefInput } from '../service/api.js';
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
  // Steps back through history have no object form: the ref goes as its text.
  if (at.steps !== undefined) return refString(at);
  return at.commit !== undefined ? { commit: at.commit } : at.tag !== undefined ? { tag: at.tag } : { branch: at.branch ?? 'main' };
}

/** What a GQT case runs on: one driver, whatever the transport. */
export type GqtDriver = ApiDriver;

export class ApiDriver {
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

  close(): Promise<void> {
    return this.host.close();
  }
}
