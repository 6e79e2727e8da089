// Which store the control plane runs on, from its configuration: PostgreSQL when GPUFLEET_DATABASE_URL
// is set (docs/postgres.md), the embedded store under GPUFLEET_DATA_DIR otherwise; and the one secret
// box both the store's record codec and the services (registry passwords, host keys, worker tokens)
// seal with: GPUFLEET_SECRET_KEY when set, else `<dataDir>/secret.key`.
import { GpufleetError } from '../model/index.ts';
import { hostLoadRule } from '../fleet/index.ts';
import { LowdbStore, PgSharedDatabase, PgStore, SecretBox, type SharedDatabase, type Store, type StoreObserver } from '../store/index.ts';
import type { ServerConfig } from './config.ts';

export interface OpenStoreOptions {
  observer?: StoreObserver;
  onNotice?: (message: string) => void;
  onError?: (error: GpufleetError) => void;
}

type StoreConfig = Pick<ServerConfig, 'dataDir' | 'databaseUrl' | 'secretKey'>;

export async function secretBoxFor(config: StoreConfig): Promise<SecretBox> {
  if (config.databaseUrl && !config.secretKey)
    throw new GpufleetError(
      'INTERNAL',
      'GPUFLEET_SECRET_KEY is required with GPUFLEET_DATABASE_URL (32 bytes in base64, as `openssl rand -base64 32` prints), and must be the same on every replica',
    );
  return config.secretKey ? SecretBox.fromKey(config.secretKey) : SecretBox.load(config.dataDir);
}

export async function openStore(config: StoreConfig, opts: OpenStoreOptions = {}): Promise<Store> {
  const secretBox = await secretBoxFor(config);
  if (config.databaseUrl) return PgStore.open({ url: config.databaseUrl, secretBox, hostLoad: hostLoadRule, ...opts });
  return LowdbStore.open({ dir: config.dataDir, ...(config.secretKey ? { secretBox } : {}), ...opts });
}

/**
 * What replicas share through the store's database when it is PostgreSQL (host leases, leaderships,
 * rate windows, the job queue's rows, on the store's pool), else null: one process holds it all.
 */
export function sharedDatabase(store: Store): SharedDatabase | null {
  return store instanceof PgStore ? new PgSharedDatabase(store.pool) : null;
}
