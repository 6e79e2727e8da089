// An S3-compatible server for the media store's tests: s3rver (devDependency), on a free port of
// loopback, with its own temporary directory and one bucket. Its credentials are its fixed defaults.
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { S3MediaConfig } from '../../../core/index.ts';

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (opts: Record<string, unknown>) => S3rverInstance;

export interface TestS3 {
  config: S3MediaConfig;
  /** every key in the bucket, as a client of the bucket lists them */
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startS3rver(bucket = 'gpufleet-media'): Promise<TestS3> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const directory = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  // s3rver's own fixed credentials
  const config: S3MediaConfig = { endpoint: `http://127.0.0.1:${port}`, bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', prefix: 'media/' };
  return {
    config,
    async keys() {
      const c = new S3Client({ ...config, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
      try {
        return ((await c.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key!);
      } finally {
        c.destroy();
      }
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
