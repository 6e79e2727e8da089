// Migration 5: the index of an endpoint's job history (GET /v2/serverless/{id}/jobs,
// store/pg/jobs/statements.ts `listJobs`). The page query filters on endpoint_id and account_id
// (equalities) and reads newest first by (created_at, id COLLATE "C"): with this index PostgreSQL
// walks the account's jobs of the endpoint already in page order and stops after `limit` rows, instead
// of reading, detoasting and sorting the endpoint's whole retained history for every page.
import type { Migration } from './migration.ts';

export const JOB_HISTORY_INDEX_MIGRATION: Migration = {
  version: 5,
  name: 'job-history-index',
  sql: `CREATE INDEX IF NOT EXISTS gf_jobs_history ON gf_jobs (endpoint_id, account_id, created_at DESC, id COLLATE "C" DESC)`,
};
