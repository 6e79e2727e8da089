// Wires the control plane's services over one store. REST, GraphQL and the provisioner share them.
import { loadPriceBook, type PriceBook } from '../fleet/index.ts';
import type { ServerConfig } from './config.ts';
import { ApiKeys } from './api-keys.ts';
import { LowdbStore } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import { FleetPlacer } from './fleet-placer.ts';
import { PodService } from './pod-service.ts';
import { CatalogService } from './catalog-service.ts';
import { SecretBox } from '../store/index.ts';
import { FleetService } from '../fleet/index.ts';
import { SshPool } from '../fleet/index.ts';
import { TemplateService } from './template-service.ts';
import { NetworkVolumeService } from './network-volume-service.ts';
import { RegistryService } from './registry-service.ts';
import { EndpointService } from './endpoint-service.ts';
import { BillingService } from './billing-service.ts';

export interface Services {
  config: ServerConfig;
  store: Store;
  keys: ApiKeys;
  pods: PodService;
  placer: FleetPlacer;
  prices: PriceBook;
  catalog: CatalogService;
  secretBox: SecretBox;
  sshPool: SshPool;
  fleet: FleetService;
  templates: TemplateService;
  networkVolumes: NetworkVolumeService;
  registries: RegistryService;
  endpoints: EndpointService;
  billing: BillingService;
}

export async function createServices(config: ServerConfig, store?: Store): Promise<Services> {
  const s = store ?? (await LowdbStore.open({ dir: config.dataDir }));
  const prices = loadPriceBook(config.dataDir);
  const placer = await FleetPlacer.create(s, prices);
  const secretBox = await SecretBox.load(config.dataDir);
  const sshPool = new SshPool();
  return {
    config,
    store: s,
    keys: new ApiKeys(s),
    pods: new PodService(s, placer),
    placer,
    prices,
    catalog: new CatalogService(s, placer, prices),
    secretBox,
    sshPool,
    fleet: new FleetService(s, sshPool, secretBox),
    templates: new TemplateService(s),
    networkVolumes: new NetworkVolumeService(s),
    registries: new RegistryService(s, secretBox),
    endpoints: new EndpointService(s),
    billing: new BillingService(s),
  };
}
