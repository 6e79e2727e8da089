// vitest global setup: under GPUFLEET_TEST_STORE=postgres one PostgreSQL cluster for the whole run
// (each control plane then gets a database of its own on it: test/harness/test-store.ts).
import { startPostgres } from './postgres.ts';

export default async function setup(): Promise<(() => Promise<void>) | void> {
  if (process.env.GPUFLEET_TEST_STORE !== 'postgres' || process.env.GPUFLEET_TEST_PG_URL) return;
  const pg = await startPostgres();
  process.env.GPUFLEET_TEST_PG_URL = pg.url;
  return async () => {
    await pg.stop();
  };
}
