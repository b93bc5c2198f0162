/** GQT over the engine in this process; `restart` reopens the store with a new service and empty caches. */
import { embeddedApi, type BranchgraphApi } from '../service/api.js';
import { serviceOnStore } from '../service/open-service.js';
import type { BranchgraphService } from '../service/service.js';
import type { ObjectStore } from '../store/object-store.js';
import { ApiDriver, type ApiHost } from './api-driver.js';
import { embeddedTypedGraphql } from '../http/typed-graphql-endpoint.js';
import type { TypedAnswer } from './gqt-driver.js';

class EmbeddedHost implements ApiHost {
  private service: BranchgraphService | undefined;
  private current: BranchgraphApi | undefined;
  private typed: ((branch: string, query: string) => Promise<TypedAnswer>) | undefined;

  constructor(private readonly reopenStore: () => ObjectStore) {}

  api(): BranchgraphApi {
    if (this.current === undefined) throw new Error('driver is not open');
    return this.current;
  }

  async restart(): Promise<void> {
    await this.service?.close();
    this.service = await serviceOnStore(this.reopenStore(), { actor: 'gqt', shard: 'gqt' });
    this.current = embeddedApi(this.service, { transport: 'gqt', actor: 'gqt' });
    this.typed = embeddedTypedGraphql(this.service, { transport: 'gqt', actor: 'gqt' }) as (b: string, q: string) => Promise<TypedAnswer>;
  }

  typedGraphql(branch: string, query: string): Promise<TypedAnswer> {
    if (this.typed === undefined) throw new Error('driver is not open');
    return this.typed(branch, query);
  }

  async close(): Promise<void> {
    await this.service?.close();
    this.service = undefined;
    this.current = undefined;
  }
}

export async function openEmbeddedDriver(reopenStore: () => ObjectStore): Promise<ApiDriver> {
  const host = new EmbeddedHost(reopenStore);
  await host.restart();
  return new ApiDriver('embedded', host);
}
