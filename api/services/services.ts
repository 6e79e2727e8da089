// Wires the control plane's services over one store. REST, GraphQL and the provisioner share them.
import { loadPriceBook, type PriceBook } from '../../fleet/gpu-catalog.ts';
import type { ServerConfig } from '../config.ts';
import { ApiKeys } from '../auth/api-keys.ts';
import { LowdbStore } from '../store/lowdb-store.ts';
import type { Store } from '../store/store.ts';
import { FleetPlacer } from './fleet-placer.ts';
import { PodService } from './pod-service.ts';
import { CatalogService } from './catalog-service.ts';

export interface Services {
  config: ServerConfig;
  store: Store;
  keys: ApiKeys;
  pods: PodService;
  placer: FleetPlacer;
  prices: PriceBook;
  catalog: CatalogService;
}

export async function createServices(config: ServerConfig, store?: Store): Promise<Services> {
  const s = store ?? (await LowdbStore.open({ dir: config.dataDir }));
  const prices = loadPriceBook(config.dataDir);
  const placer = await FleetPlacer.create(s, prices);
  return {
    config,
    store: s,
    keys: new ApiKeys(s),
    pods: new PodService(s, placer),
    placer,
    prices,
    catalog: new CatalogService(s, placer, prices),
  };
}
