import type { CatchUpInput, MergeInput } from '../service/inputs.js';
import type { BranchgraphService, RequestContext } from '../service/service.js';
import { serviceOnStore } from '../service/open-service.js';
import type { ObjectStore } from '../store/object-store.js';
import type { DriverRef, GqtDriver } from './gqt-driver.js';
import type { WriteLine } from './gqt-parser.js';

/** GQT over the engine in this process; `restart` reopens the graph with empty caches. */
export class EmbeddedDriver implements GqtDriver {
  readonly name = 'embedded';
  private service: BranchgraphService | undefined;
  private readonly ctx: RequestContext = { transport: 'gqt', actor: 'gqt' };

  private constructor(private readonly reopenStore: () => ObjectStore) {}

  static async open(reopenStore: () => ObjectStore): Promise<EmbeddedDriver> {
    const d = new EmbeddedDriver(reopenStore);
    await d.restart();
    return d;
  }

  private get svc(): BranchgraphService {
    if (this.service === undefined) throw new Error('driver is not open');
    return this.service;
  }

  async restart(): Promise<void> {
    await this.service?.close();
    this.service = await serviceOnStore(this.reopenStore(), { actor: 'gqt', shard: 'gqt' });
  }

  async applySchema(branch: string, text: string): Promise<void> {
    await this.svc.applySchema(branch, { schema: text }, this.ctx);
  }

  async write(branch: string, ops: WriteLine[]): Promise<void> {
    await this.svc.write(branch, { ops }, this.ctx);
  }

  async ingest(branch: string, ops: WriteLine[]): Promise<void> {
    await this.svc.ingest(branch, ops, this.ctx);
  }

  async catchUp(branch: string, input: CatchUpInput): Promise<void> {
    await this.svc.catchUp(branch, input, this.ctx);
  }

  async pendingGenerations(branch: string): Promise<number> {
    return (await this.svc.walStatus(branch, this.ctx)).pendingGenerations;
  }

  async createBranch(name: string, from: DriverRef): Promise<void> {
    await this.svc.createBranch(name, from.commit !== undefined ? { commit: from.commit } : { branch: from.branch ?? 'main' }, this.ctx);
  }

  async deleteBranch(name: string): Promise<void> {
    await this.svc.deleteBranch(name, this.ctx);
  }

  merge(source: string, input: MergeInput) {
    return this.svc.mergeBranch(source, input, this.ctx);
  }

  async rows(table: string, at: DriverRef) {
    const ref = at.commit !== undefined ? { commit: at.commit } : { branch: at.branch ?? 'main' };
    const out: { key: string; row: Record<string, unknown> }[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.svc.scan(ref, table, { limit: 1000, ...(cursor !== undefined ? { cursor } : {}) }, this.ctx);
      out.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    return out;
  }

  async schemaText(at: DriverRef): Promise<string> {
    return (await this.svc.getSchema(at.commit !== undefined ? { commit: at.commit } : { branch: at.branch ?? 'main' }, this.ctx)).text;
  }

  log(branch: string) {
    return this.svc.log({ branch }, 1000, this.ctx);
  }

  async head(branch: string): Promise<string> {
    return (await this.svc.getBranch(branch, this.ctx)).head.id;
  }

  async close(): Promise<void> {
    await this.svc.close();
  }
}
