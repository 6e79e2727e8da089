// Public model endpoints: the catalog, what becomes of their results, and their charges
// (docs/public-endpoints.md).
export { PublicEndpointCatalog, toPublicEndpointView, type PublicEndpointView } from './catalog.ts';
export { PublicEndpointOutputs, costMicros } from './job-output.ts';
export { PublicEndpointCharges, chargeId, type PublicEndpointChargesOptions } from './charges.ts';
