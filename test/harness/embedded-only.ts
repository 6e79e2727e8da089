// Tests of the embedded store's own files (its journal, snapshot, data directory, full disk) mean
// nothing on PostgreSQL: under GPUFLEET_TEST_STORE=postgres they are skipped, and say so. So are, for
// now, tests that check a result by reading the embedded job queue's log or `secret.key` from the data
// directory (their behaviour on PostgreSQL is covered by the queue contract tests; docs/postgres.md).
import { describe, it } from 'vitest';
import { TEST_STORE } from './test-store.ts';

export const describeEmbeddedOnly = TEST_STORE === 'postgres' ? describe.skip : describe;
export const itEmbeddedOnly = TEST_STORE === 'postgres' ? it.skip : it;
