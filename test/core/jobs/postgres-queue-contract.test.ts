// The job queue's contract over PostgreSQL: the embedded queue's own tests (every file that is not
// about its log file), unchanged, with the fixture opening PostgresJobQueue on a real PostgreSQL
// (a cluster of this file's own, one schema per fixture). The embedded-only tests stay embedded:
// job-log (the log's files, compaction), sigkill (the log under kill -9), job-table (its heap).
import { afterAll, describe } from 'vitest';
import { startPostgres } from '../../harness/postgres.ts';
import { usePostgres } from './contract-fixture.ts';

const server = await startPostgres();
usePostgres(server);
afterAll(async () => {
  await server.stop();
});

describe('queue operations over PostgreSQL', async () => {
  await import('./queue-ops.test.ts');
});
describe('leases over PostgreSQL', async () => {
  await import('./leases.test.ts');
});
describe('long polls over PostgreSQL', async () => {
  await import('./long-poll.test.ts');
});
describe('retention over PostgreSQL', async () => {
  await import('./retention.test.ts');
});
describe('status ttl and stream waits over PostgreSQL', async () => {
  await import('./status-ttl-and-stream-wait.test.ts');
});
