// The public surface of store/: what other layers import.
export * from './embedded/lowdb-store.ts';
export * from './pg/index.ts';
export * from './base/secret-box.ts';
export * from './embedded/store-check.ts';
export * from './base/store.ts';
export * from './base/record-log.ts';
export * from './log/index.ts';
export * from './base/job-rows.ts';
export * from './base/shared-database.ts';
