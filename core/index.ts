// The public surface of core/: what other layers import.
export * from './api-keys.ts';
export * from './billing-service.ts';
export * from './billing.ts';
export * from './catalog-service.ts';
export * from './config.ts';
export * from './endpoint-service.ts';
export * from './network-volume-service.ts';
export * from './pod-service.ts';
export * from './registry-service.ts';
export * from './services.ts';
export * from './template-service.ts';
