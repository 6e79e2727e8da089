// The public surface of store/: what other layers import.
export * from './lowdb-store.ts';
export * from './pg/index.ts';
export * from './secret-box.ts';
export * from './store-check.ts';
export * from './store.ts';
