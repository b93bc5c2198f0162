/** GQT over the engine in this process; `restart` reopens the store with a new service and empty caches. */
import { embeddedApi, type BranchgraphApi } from '../service/api.js';
import { serviceOnStore } from '../service/open-service.js';
import type { BranchgraphService } from '../service/service.js';
import type { ObjectStore } from '../store/object-store.js';
import { ApiDriver, type ApiHost } from './api-driver.js';
import type { TypedAnswer } from './gqt-driver.js';

class EmbeddedHost implements ApiHost {
  private service: BranchgraphService | undefined;
  private current: BranchgraphApi | undefined;
  /** The typed endpoint in process, built on the first typed step: Yoga costs a quarter second to load, which most cases never need. */
  private typed: Promise<(branch: string, query: string) => Promise<unknown>> | undefined;

  constructor(private readonly reopenStore: () => ObjectStore) {}

  api(): BranchgraphApi {
    if (this.current === undefined) throw new Error('driver is not open');
    return this.current;
  }

  async restart(): Promise<void> {
    await this.service?.close();
    this.service = await serviceOnStore(this.reopenStore(), { actor: 'gqt', shard: 'gqt' });
    this.current = embeddedApi(this.service, { transport: 'gqt', actor: 'gqt' });
    this.typed = undefined;
  }

  async typedGraphql(branch: string, query: string): Promise<TypedAnswer> {
    const service = this.service;
    if (service === undefined) throw new Error('driver is not open');
    this.typed ??= import('../http/typed-graphql-endpoint.js').then((m) =>
      m.embeddedTypedGraphql(service, { transport: 'gqt', actor: 'gqt' }),
    );
    return (await (
      await this.typed
    )(branch, query)) as TypedAnswer;
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
