// core/replicas: several control planes on one database: replica ids, host leases (the rules; the
// rows are the store's, store/pg/replicas), the leaderships' names.
export { type HostLeases, type LeaseSync, SoleHostLeases } from './host-leases.ts';
export { DEFAULT_LEASE_TTL_MS, FLEET_LEADERSHIP, SharedHostLeases } from './shared-host-leases.ts';
export { newReplicaId } from './replica-id.ts';

/** the media sweeper's leadership, over a bucket the replicas share (core/public-models/media, asked before each sweep) */
export const MEDIA_SWEEP_LEADERSHIP = 'media-sweep';
