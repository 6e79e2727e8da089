// Which store the suite's control planes run on. `GPUFLEET_TEST_STORE=postgres` (npm run
// test:postgres): every startTestControlPlane() gets a fresh database on one PostgreSQL cluster that
// vitest's global setup starts once for the run (test/harness/postgres-global-setup.ts) and names in
// GPUFLEET_TEST_PG_URL; outside vitest the first use starts one for the process. Unset: the embedded
// store, as always. Tests of the embedded store's own files (journal, snapshot, full disk) skip
// themselves under postgres (test/harness/embedded-only.ts).
import pg from 'pg';
import { startPostgres, type TestPostgres } from './postgres.ts';

export type TestStoreKind = 'embedded' | 'postgres';

export const TEST_STORE: TestStoreKind = process.env.GPUFLEET_TEST_STORE === 'postgres' ? 'postgres' : 'embedded';

/** the GPUFLEET_SECRET_KEY of every control plane the suite runs on PostgreSQL */
export const TEST_SECRET_KEY = Buffer.from('gpufleet-test-secret-key-32bytes', 'utf8');

let own: Promise<TestPostgres> | null = null;

/** the cluster of this run: global setup's, or one started for this process */
async function clusterUrl(): Promise<string> {
  const url = process.env.GPUFLEET_TEST_PG_URL;
  if (url) return url;
  own ??= startPostgres().then((p) => {
    process.once('beforeExit', () => void p.stop());
    return p;
  });
  return (await own).url;
}

let n = 0;

/** A new empty database on the run's cluster; answers its URL. */
export async function freshTestDatabase(): Promise<string> {
  const url = new URL(await clusterUrl());
  const name = `gf_${process.pid}_${Date.now().toString(36)}_${++n}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  url.pathname = `/${name}`;
  return url.toString();
}
