// Tests of the embedded store's own files (its journal, snapshot, data directory, full disk) and of
// the embedded job queue's log mean nothing on PostgreSQL: under GPUFLEET_TEST_STORE=postgres they
// are skipped, and say so (each names why; the list is in docs/postgres.md, "Tests"). A test that
// only checks a result through those files runs on both stores, checking it another way on
// PostgreSQL (the queue's port: job-history.ts; the database's rows and files: database-at-rest.ts).
import { describe, it } from 'vitest';
import { TEST_STORE } from './test-store.ts';

export const describeEmbeddedOnly = TEST_STORE === 'postgres' ? describe.skip : describe;
export const itEmbeddedOnly = TEST_STORE === 'postgres' ? it.skip : it;
