// The public surface of client/: what other layers import.
export * from './api-client.ts';
export * from './resource-api.ts';
export * from './resources.ts';
export * from './accounts.ts';
export * from './pods.ts';
export * from './exec-frames.ts';
export * from './pod-exec-socket.ts';
export * from './endpoints.ts';
export * from './jobs.ts';
export * from './hosts.ts';
