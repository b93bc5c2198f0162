/** GQT over the engine in this process; `restart` reopens the store with a new service and empty caches. */
import { embeddedApi, type BranchgraphApi } from '../service/api.js';
import { serviceOnStore } from '../service/open-service.js';
import type { BranchgraphService } from '../service/service.js';
import type { ObjectStore } from '../store/object-store.js';
import { ApiDriver, type ApiHost } from './api-driver.js';

class EmbeddedHost implements ApiHost {
  private service: BranchgraphService | undefined;
  private current: BranchgraphApi | undefined;

  constructor(private readonly reopenStore: () => ObjectStore) {}

  api(): BranchgraphApi {
    if (this.current === undefined) throw new Error('driver is not open');
    return this.current;
  }

  async restart(): Promise<void> {
    await this.service?.close();
    this.service = await serviceOnStore(this.reopenStore(), { actor: 'gqt', shard: 'gqt' });
    this.current = embeddedApi(this.service, { transport: 'gqt', actor: 'gqt' });
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
