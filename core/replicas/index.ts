// core/replicas: several control planes on one database: replica ids, host leases, leadership, rate windows.
export { type HostLeases, SoleHostLeases } from './host-leases.ts';
export { PgHostLeases } from './pg-host-leases.ts';
export { MEDIA_SWEEP_LEADERSHIP, PgLeadership } from './pg-leadership.ts';
export { PgRateWindows } from './pg-rate-windows.ts';
export { newReplicaId } from './replica-id.ts';
