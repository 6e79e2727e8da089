// Several control planes on one PostgreSQL database of their own (a fresh cluster from
// test/harness/postgres.ts): what a replica test starts in beforeAll and closes in afterAll.
import { startTestControlPlane, type TestControlPlane, type TestControlPlaneOptions } from './control-plane.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';

export interface TestReplicas {
  cluster: TestPostgres;
  cps: TestControlPlane[];
  /** closes every control plane, then stops the cluster */
  close(): Promise<void>;
}

/** `n` replicas sharing a new database; `opts.config` is merged under the database settings. */
export async function startReplicas(n: number, opts: TestControlPlaneOptions = {}, secretKey = Buffer.alloc(32, 7)): Promise<TestReplicas> {
  const cluster = await startPostgres();
  const url = await cluster.createDatabase();
  const cps = await Promise.all(
    Array.from({ length: n }, () => startTestControlPlane({ ...opts, config: { ...opts.config, databaseUrl: url, secretKey } })),
  );
  return {
    cluster,
    cps,
    async close() {
      await Promise.all(cps.map((cp) => cp.close()));
      await cluster.stop();
    },
  };
}
