// core/public-models: models published for every account: the catalog, per-unit charges and credit
// holds, job output, and the media store that serves what they produce (media/).
export { PublicEndpointCatalog } from './catalog.ts';
export { chargeId } from './charge-record.ts';
export { PublicEndpointCharges } from './charges.ts';
export { PublicEndpointOutputs } from './job-output.ts';
export { LocalMediaStore } from './media/local-media-store.ts';
export { mediaS3FromEnv, publicOrigin } from './media/media-config.ts';
export { MEDIA_SWEEP_LEAD_MS, MEDIA_URL_LIFETIME_MS, MediaService, resolveRange } from './media/media-service.ts';
export { type MediaStore } from './media/media-store.ts';
export { canonicalMime, imagePixels, kindOf, sniffMime, wavSeconds } from './media/media-types.ts';
export { type S3MediaConfig, S3MediaStore } from './media/s3-media-store.ts';
