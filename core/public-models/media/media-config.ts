// Where media outputs are kept (docs/media.md): local disk under the data dir unless
// GPUFLEET_MEDIA_S3_BUCKET names an S3-compatible bucket, and the origin their URLs name.
import type { S3MediaConfig } from './s3-media-store.ts';

export function mediaS3FromEnv(env: NodeJS.ProcessEnv): S3MediaConfig | undefined {
  const bucket = env.GPUFLEET_MEDIA_S3_BUCKET;
  if (!bucket) return undefined;
  const opt = (name: string) => env[`GPUFLEET_MEDIA_S3_${name}`] || undefined;
  const [endpoint, region, accessKeyId, secretAccessKey, prefix] = ['ENDPOINT', 'REGION', 'ACCESS_KEY_ID', 'SECRET_ACCESS_KEY', 'PREFIX'].map(opt);
  return {
    bucket,
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(accessKeyId ? { accessKeyId } : {}),
    ...(secretAccessKey ? { secretAccessKey } : {}),
    ...(prefix !== undefined ? { prefix } : {}),
  };
}

/**
 * The origin media URLs name (GPUFLEET_PUBLIC_URL): what callers reach the control plane at. Unset,
 * the address it listens on (a wildcard address becomes 127.0.0.1), which serves only on that machine.
 */
export function publicOrigin(config: { publicUrl?: string | undefined; host: string; port: number }): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}
