// The PostgreSQL store (docs/postgres.md): what store/index.ts exports of it.
export { PgStore, type PgStoreOptions } from './pg-store.ts';
export { migrate, migrateDatabase, pendingMigrations, MIGRATIONS, type MigrateResult } from './pg-schema.ts';
export type { AfterStatement } from './migration.ts';
export { importDataDir, type ImportCount, type ImportOptions } from './pg-import.ts';
export type { HostLoadRule } from './host-capacity.ts';
export { cannotWrite, describeDatabaseError, isServerShort } from './pg-errors.ts';
export { probeDatabaseWrite, WRITE_PROBE_TABLE } from './write-probe.ts';
export { PgJobRows } from './jobs/pg-job-rows.ts';
export { PgHostLeaseTable } from './replicas/pg-host-leases.ts';
export { PgLeadership } from './replicas/pg-leadership.ts';
export { PgRateWindows } from './replicas/pg-rate-windows.ts';
export { PgSharedDatabase } from './replicas/pg-shared-database.ts';
