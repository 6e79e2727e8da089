// The job queue's contract over PostgreSQL: the embedded queue's own tests (every file that is not
// about its log file), unchanged, with the fixture opening PostgresJobQueue on a real PostgreSQL
// (a cluster of this file's own, one schema per fixture). The embedded-only tests stay embedded:
// job-log (the log's files, compaction), sigkill (the log under kill -9), job-table (its heap).
// The suite runs with `isolate: false` (vitest.config.ts): a worker may have run those files already,
// so each is imported under a query of its own (a module instance of this file's, whose tests register
// here), and the fixture goes back to the embedded queue when this file ends.
import { afterAll, describe } from 'vitest';
import { startPostgres } from '../../harness/postgres.ts';
import { usePostgres } from './contract-fixture.ts';

/** a contract file's own module instance for this file (its tests register in the describe around it) */
const again = (name: string) => import(`./${name}.test.ts?postgres`);

const server = await startPostgres();
usePostgres(server);
afterAll(async () => {
  usePostgres(undefined);
  await server.stop();
});

describe('queue operations over PostgreSQL', async () => {
  await again('queue-ops');
});
describe('leases over PostgreSQL', async () => {
  await again('leases');
});
describe('long polls over PostgreSQL', async () => {
  await again('long-poll');
});
describe('retention over PostgreSQL', async () => {
  await again('retention');
});
describe('status ttl and stream waits over PostgreSQL', async () => {
  await again('status-ttl-and-stream-wait');
});
