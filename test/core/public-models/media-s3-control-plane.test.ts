// The S3 option end to end: a control plane configured with GPUFLEET_MEDIA_S3_* settings (s3rver on a
// free port) keeps a public model's image in the bucket, serves it by its signed URL, and its sweeper
// deletes the object once the URL has expired (the media clock moved 7 days). A second control plane
// over the same bucket and the same key serves the URL too; one with another key refuses it. The key
// is secret.key on the embedded store (copied into the second one's data directory, or not), and
// GPUFLEET_SECRET_KEY on PostgreSQL (a second replica on the same database with the same key, or a
// control plane on another database with another key).
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { configFromEnv, type ServerConfig } from '../../../core/index.ts';
import { ADMIN_KEY, startTestControlPlane } from '../../harness/control-plane.ts';
import { startJobWorld, type JobWorld } from '../../api/jobs/in-process-workers.ts';
import { loadRunpodSdk } from '../../api/jobs/runpod-sdk.ts';
import { makePng } from './media-fixtures.ts';
import { startS3rver, type TestS3 } from './s3rver.ts';
import { freshTestDatabase, TEST_SECRET_KEY, TEST_STORE } from '../../harness/test-store.ts';

let s3: TestS3;
let world: JobWorld;
let now = Date.now();

beforeAll(async () => {
  s3 = await startS3rver();
  // the settings as an operator writes them
  const { mediaS3 } = configFromEnv({
    GPUFLEET_MEDIA_S3_ENDPOINT: s3.config.endpoint,
    GPUFLEET_MEDIA_S3_BUCKET: s3.config.bucket,
    GPUFLEET_MEDIA_S3_ACCESS_KEY_ID: 'S3RVER',
    GPUFLEET_MEDIA_S3_SECRET_ACCESS_KEY: 'S3RVER',
    GPUFLEET_MEDIA_S3_PREFIX: 'cp1/',
  });
  expect(mediaS3).toEqual({ endpoint: s3.config.endpoint, bucket: s3.config.bucket, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', prefix: 'cp1/' });
  world = await startJobWorld({ mediaClock: () => now, config: { mediaS3 } });
});
afterAll(async () => {
  await world?.close();
  await s3?.close();
});

/** the store settings of a second control plane whose media key is (or is not) the first one's */
async function secondPlaneStore(dataDir: string, sameKey: boolean): Promise<Partial<ServerConfig>> {
  if (TEST_STORE === 'postgres') {
    // the key is GPUFLEET_SECRET_KEY: the same on a replica of the same database, another elsewhere
    return sameKey
      ? { databaseUrl: world.cp.services.config.databaseUrl, secretKey: TEST_SECRET_KEY }
      : { databaseUrl: await freshTestDatabase(), secretKey: randomBytes(32) };
  }
  if (sameKey) await copyFile(path.join(world.cp.dataDir, 'secret.key'), path.join(dataDir, 'secret.key'));
  return {};
}

test('an image output goes to the bucket, is served by its signed URL, and is deleted after it expires', async () => {
  const tpl = (await (await world.cp.api('/v2/templates', { method: 'POST', json: { name: 'img', image: 'busybox', serverless: true } })).json()) as { id: string };
  const ep = ((await (await world.cp.api('/v1/endpoints', { method: 'POST', json: { templateId: tpl.id, gpuTypeIds: ['ADA_24'] } })).json()) as { id: string }).id;
  await world.startWorker(ep);
  const pub = await world.cp.api('/v2/public-endpoints', { method: 'POST', key: ADMIN_KEY, json: { slug: 'png-fixture', endpointId: ep, name: 'PNG', pricing: { unit: 'megapixel', usdPerUnit: 0.01, maxUnitsPerJob: 100 } } });
  expect(pub.status).toBe(201);

  const sdk = await loadRunpodSdk();
  const png = makePng(1000, 500);
  const r = await sdk(world.user.key, { baseUrl: `${world.cp.url}/v2` }).endpoint('png-fixture')!.runSync({ input: { output: { image_base64: png.toString('base64') } } }, 30_000);
  // megapixels measured from the PNG header: 0.5 MP × 0.01
  expect(r.output).toMatchObject({ usage: { units: 0.5, unit: 'megapixel' }, cost: 0.005 });
  const key = new URL(r.output.image_url).pathname.split('/').pop()!;
  expect(await s3.keys()).toEqual([`cp1/${key}`]);
  // nothing on local disk
  expect(await readdir(path.join(world.cp.dataDir, 'media')).catch(() => [])).toEqual([]);
  const img = await fetch(r.output.image_url);
  expect(img.status).toBe(200);
  expect(img.headers.get('content-length')).toBe(String(png.length));
  expect(Buffer.from(await img.arrayBuffer()).equals(png)).toBe(true);
  const tail = await fetch(r.output.image_url, { headers: { range: 'bytes=-100' } });
  expect(tail.status).toBe(206);
  expect(tail.headers.get('content-range')).toBe(`bytes ${png.length - 100}-${png.length - 1}/${png.length}`);
  expect(Buffer.from(await tail.arrayBuffer()).equals(png.subarray(-100))).toBe(true);

  // another control plane behind the same name: same bucket, same key, its own data dir
  const u = new URL(r.output.image_url);
  for (const [sameKey, status] of [[true, 200], [false, 403]] as const) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cp2-'));
    const store = await secondPlaneStore(dataDir, sameKey);
    const cp2 = await startTestControlPlane({ dataDir, config: { ...store, mediaS3: world.cp.services.config.mediaS3 } });
    try {
      expect(cp2.services.config.databaseUrl).toBe(TEST_STORE === 'postgres' ? store.databaseUrl : undefined);
      const res = await fetch(`${cp2.url}${u.pathname}${u.search}`);
      expect(res.status, sameKey ? 'same key' : 'another key').toBe(status);
      if (status === 200) expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
    } finally {
      await cp2.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  now += 7 * 86_400_000;
  expect((await fetch(r.output.image_url)).status).toBe(410);
  expect(await world.cp.services.media.sweep()).toBe(1);
  expect(await s3.keys()).toEqual([]);
});
