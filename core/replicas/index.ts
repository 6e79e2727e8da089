// Several control-plane replicas on one database (docs/replicas.md): the replica's id, host leases, the
// leaderships of loops that run once in all, shared rate-limit windows.
export { newReplicaId } from './replica-id.ts';
export { SoleHostLeases, type HostLeases, type LeaseSync } from './host-leases.ts';
export { PgHostLeases, DEFAULT_LEASE_TTL_MS, type PgHostLeasesOptions } from './pg-host-leases.ts';
export { PgLeadership, MEDIA_SWEEP_LEADERSHIP } from './pg-leadership.ts';
export { PgRateWindows, type SharedWindowState } from './pg-rate-windows.ts';
