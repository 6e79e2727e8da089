// Public model endpoints: the catalog, what becomes of their results, and their charges
// (docs/public-endpoints.md).
export { PublicEndpointCatalog, toPublicEndpointView, type PublicEndpointView } from './catalog.ts';
export { PublicEndpointOutputs, costMicros } from './job-output.ts';
export { PublicEndpointCharges, type PublicEndpointChargesOptions } from './charges.ts';
export { chargeId } from './charge-record.ts';
export { CHARGE_SWEEP_LAG_MS, CHARGE_SWEEP_MS, type ChargeSweepOptions, type ChargeSweepResult } from './charge-sweep.ts';
