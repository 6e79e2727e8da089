// The media store in an S3-compatible bucket, for several control planes behind one name: objects
// `<prefix><key>`. Path-style addressing (MinIO, Ceph, s3rver and most self-hosted servers need it)
// and checksums only where an operation requires them (current SDKs add CRC32 checksums by default,
// which some of those servers refuse). docs/media.md.
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { assertMediaKey, MEDIA_KEY_PATTERN, type ByteRange, type MediaObject, type MediaStore } from './media-store.ts';

export interface S3MediaConfig {
  /** GPUFLEET_MEDIA_S3_ENDPOINT: the server's URL, e.g. https://minio.internal:9000 (unset: AWS) */
  endpoint?: string;
  /** GPUFLEET_MEDIA_S3_BUCKET */
  bucket: string;
  /** GPUFLEET_MEDIA_S3_REGION, default us-east-1 */
  region?: string;
  /** GPUFLEET_MEDIA_S3_ACCESS_KEY_ID / GPUFLEET_MEDIA_S3_SECRET_ACCESS_KEY (unset: the SDK's default chain) */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** GPUFLEET_MEDIA_S3_PREFIX, default `media/` */
  prefix?: string;
}

export class S3MediaStore implements MediaStore {
  readonly backend = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(config: S3MediaConfig) {
    this.bucket = config.bucket;
    this.prefix = config.prefix ?? 'media/';
    this.client = new S3Client({
      region: config.region ?? 'us-east-1',
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.accessKeyId && config.secretAccessKey ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } } : {}),
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    assertMediaKey(key);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: bytes, ContentType: contentType, ContentLength: bytes.length }));
  }

  async size(key: string): Promise<number | undefined> {
    assertMediaKey(key);
    try {
      return (await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }))).ContentLength ?? 0;
    } catch (e) {
      if (missing(e)) return undefined;
      throw e;
    }
  }

  async get(key: string, range?: ByteRange): Promise<MediaObject | undefined> {
    assertMediaKey(key);
    try {
      const r = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      if (!(r.Body instanceof Readable)) throw new Error('the S3 client answered a body that is not a Node stream');
      return { body: r.Body, size: r.ContentLength ?? 0 };
    } catch (e) {
      if (missing(e)) return undefined;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    assertMediaKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
  }

  async *list(): AsyncIterable<string> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const o of page.Contents ?? []) {
        const key = o.Key?.slice(this.prefix.length);
        if (key && MEDIA_KEY_PATTERN.test(key)) yield key;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function missing(e: unknown): boolean {
  const name = (e as { name?: string }).name;
  return name === 'NoSuchKey' || name === 'NotFound';
}
