// The port of the media store (docs/media.md): bytes under a key the media service made from ids
// only (`<expiry>-<32 hex>.<ext>`, checked again here), nothing else. Two implementations satisfy the
// same contract test: local disk under the data dir (the default) and an S3-compatible bucket.
import type { Readable } from 'node:stream';
import { GpufleetError } from '../../../model/index.ts';

export interface MediaObject {
  body: Readable;
  /** bytes in `body` */
  size: number;
}

/** bytes `start` to `end`, both included (an HTTP byte range, resolved against the object's size) */
export interface ByteRange {
  start: number;
  end: number;
}

export interface MediaStore {
  /** `local` or `s3`, for logs and docs */
  readonly backend: string;
  /** writes the whole object; a reader never sees part of it */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** the object's size in bytes, or undefined when there is none */
  size(key: string): Promise<number | undefined>;
  /** the object (or the bytes of `range`, which lies inside it), or undefined when there is none */
  get(key: string, range?: ByteRange): Promise<MediaObject | undefined>;
  /** removes it; removing a missing key is not an error */
  delete(key: string): Promise<void>;
  /** every key held (the sweeper reads expiries from them) */
  list(): AsyncIterable<string>;
  close(): Promise<void>;
}

/** the only keys a store takes: made by the media service, never from a caller's string */
export const MEDIA_KEY_PATTERN = /^(\d{1,12})-([0-9a-f]{32})\.([a-z0-9]{2,5})$/;

export function assertMediaKey(key: string): void {
  if (!MEDIA_KEY_PATTERN.test(key)) throw new GpufleetError('INTERNAL', 'not a media key');
}
