// Several in-process control planes on one fresh PostgreSQL database of a test cluster, started
// together (each runs migrations and the bootstrap against the same empty database), with quotas far
// above what a concurrency test sends.
import type { ServerConfig } from '../../api/index.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane.ts';
import type { TestPostgres } from './postgres.ts';

export async function replicasOnOneDatabase(cluster: TestPostgres, count: number, config: Partial<ServerConfig> & { secretKey: Buffer }): Promise<TestControlPlane[]> {
  const url = await cluster.createDatabase();
  const replica = () => startTestControlPlane({ rateLimits: 'minute=10000000,hour=100000000,day=1000000000', config: { databaseUrl: url, ...config } });
  return Promise.all(Array.from({ length: count }, replica));
}
