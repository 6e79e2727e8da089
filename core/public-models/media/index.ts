// The media store and its signed URLs (docs/media.md).
export * from './media-service.ts';
export * from './media-store.ts';
export * from './media-types.ts';
export { LocalMediaStore } from './local-media-store.ts';
export { S3MediaStore, type S3MediaConfig } from './s3-media-store.ts';
