// Models sold through the public catalog, end to end: the operator publishes its espeak-ng TTS
// endpoint (models/tts-espeak, runpod-python's own worker on an sshd test host) under a slug priced
// per second of audio; a user account with credits calls it by slug with the public platform's two
// clients, unmodified (runpod-sdk from npm, runpod-python's `runpod.Endpoint`), gets `audio_url`,
// fetches the WAV from it, and is charged exactly duration × usdPerUnit. The image fixture
// (models/image-fixture) is published per megapixel the same way and answers `image_url`.
//
// The price is chosen so the arithmetic is exact: a 22050 Hz 16-bit mono WAV plays 44100 bytes a
// second, so at 0.0441 USD a second each byte of audio costs one micro-dollar and a job's charge in
// micro-dollars is its WAV's data size.
import { PNG } from 'pngjs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { provisioner } from '../../provisioner/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { ensureImageFixtureImage, ensureTtsEspeakImage } from '../harness/model-images.ts';
import { RunpodPythonEndpoint } from '../api/jobs/runpod-python-endpoint.ts';
import { loadRunpodSdk, type RunpodEndpoint } from '../api/jobs/runpod-sdk.ts';
import { parseWav, rms, type Wav } from './wav.ts';

const USD_PER_SECOND = 0.0441;
const USD_PER_MEGAPIXEL = 0.05;
const START_BALANCE = 25;
const slug = `espeak-tts-e2e-${process.pid}`;
const imageSlug = `image-fixture-e2e-${process.pid}`;

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let user: { accountId: string; key: string };
let py: RunpodPythonEndpoint;
let sdkEndpoint: RunpodEndpoint;
let endpointId = '';

const json = async (res: Response) => (await res.json()) as Record<string, any>;
const asUser = (p: string, init: Parameters<TestControlPlane['api']>[1] = {}) => cp.api(p, { key: user.key, ...init });

beforeAll(async () => {
  const [image, fixture] = await Promise.all([ensureTtsEspeakImage(), ensureImageFixtureImage()]);
  host = await startTestHost({ name: `tts-e2e-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-tts-e2e' });

  // the operator (admin key): template, endpoint, catalog entry
  endpointId = await publish(slug, { name: 'tts-espeak', image, disk: 1, serverless: true }, { unit: 'second', usdPerUnit: USD_PER_SECOND, maxUnitsPerJob: 120 });
  await publish(imageSlug, { name: 'image-fixture', image: fixture, disk: 1, serverless: true, env: { IMAGE_USAGE_UNIT: 'megapixel' } }, { unit: 'megapixel', usdPerUnit: USD_PER_MEGAPIXEL, maxUnitsPerJob: 100 });

  user = await cp.newAccount('read_write', START_BALANCE);
  py = await RunpodPythonEndpoint.start(`${cp.url}/v2`);
  sdkEndpoint = (await loadRunpodSdk())(user.key, { baseUrl: `${cp.url}/v2` }).endpoint(slug)!;
}, 600_000);

afterAll(async () => {
  await py?.close();
  await disposeHostWorld({ cp, host, hostId });
});

/** as the operator: a template, an endpoint of one worker at most, and the catalog entry; the endpoint's id */
async function publish(s: string, template: Record<string, unknown>, pricing: { unit: string; usdPerUnit: number; maxUnitsPerJob: number }): Promise<string> {
  const tpl = await json(await cp.api('/v2/templates', { method: 'POST', json: template }));
  const created = await cp.api('/v1/endpoints', {
    method: 'POST',
    json: { templateId: tpl.id, name: s, gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 120 },
  });
  const ep = await json(created);
  expect(created.status, JSON.stringify(ep)).toBe(200);
  const published = await cp.api('/v2/public-endpoints', { method: 'POST', json: { slug: s, endpointId: ep.id, name: `${template.name}`, pricing } });
  expect(published.status, await published.clone().text()).toBe(201);
  return ep.id as string;
}

/** the output's audio_url fetched with no key (the signature is the credential), as a WAV */
async function audioOf(output: Record<string, any>): Promise<Wav> {
  expect(output).not.toHaveProperty('audio_base64');
  expect(output.audio_url).toMatch(/^http:\/\/.+\/v2\/media\/\d+-[0-9a-f]{32}\.wav\?signature=/);
  const res = await fetch(output.audio_url as string);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^audio\/(wav|x-wav|wave)/);
  const wav = parseWav(Buffer.from(await res.arrayBuffer()));
  expect(wav).toMatchObject({ format: 1, channels: 1, sampleRate: 22050, byteRate: 44100, bitsPerSample: 16 });
  expect(rms(wav.samples)).toBeGreaterThan(500);
  return wav;
}

test('a user runs the published TTS model by slug with runpod-sdk and runpod-python: audio_url serves the WAV, and billing charges exactly duration × usdPerUnit to the caller', async () => {
  const catalog = await json(await asUser(`/v2/public-endpoints/${slug}`));
  expect(catalog).toMatchObject({ slug, pricing: { unit: 'second', usdPerUnit: USD_PER_SECOND } });
  expect(catalog).not.toHaveProperty('endpointId');

  // runpod-sdk (npm): runSync on the slug; the cold worker may outlast the first wait
  let viaSdk = await sdkEndpoint.runSync({ input: { text: 'Hello from the JavaScript client of the public platform.' } }, 120_000);
  if (viaSdk.status !== 'COMPLETED') viaSdk = await sdkEndpoint.statusSync(viaSdk.id as string, 120_000);
  expect(viaSdk.status, JSON.stringify(viaSdk).slice(0, 400)).toBe('COMPLETED');
  const wavSdk = await audioOf(viaSdk.output);
  expect(viaSdk.output.usage).toMatchObject({ units: wavSdk.seconds, unit: 'second' });
  expect(viaSdk.output.cost).toBe(wavSdk.dataBytes / 1e6);

  // runpod-python: Endpoint(slug).run_sync returns the output
  const viaPy = await py.call({ op: 'run_sync', endpoint: slug, apiKey: user.key, request: { input: { text: 'And hello from the Python client, a little slower.', speed: 0.8 } }, timeout: 120 });
  const wavPy = await audioOf(viaPy);
  expect(viaPy.usage).toMatchObject({ units: wavPy.seconds, unit: 'second' });
  expect(viaPy.cost).toBe(wavPy.dataBytes / 1e6);
  expect(wavPy.dataBytes).not.toBe(wavSdk.dataBytes);

  // the charges: one record per job, in micro-dollars = duration × 0.0441 USD × 10⁶ = data bytes
  await expect.poll(async () => (await cp.services.store.list('billing', {})).filter((r) => r.kind === 'public-endpoint' && r.accountId === user.accountId).length, { timeout: 10_000 }).toBe(2);
  const records = (await cp.services.store.list('billing', {})).filter((r) => r.kind === 'public-endpoint' && r.accountId === user.accountId);
  expect(records.map((r) => r.amountMicros).sort()).toEqual([wavSdk.dataBytes, wavPy.dataBytes].sort());
  for (const r of records) expect(r.amountMicros).toBe(Math.round(r.units! * USD_PER_SECOND * 1e6));
  expect(records.every((r) => r.resourceId === slug)).toBe(true);
  const totalMicros = wavSdk.dataBytes + wavPy.dataBytes;

  const report = await json(await asUser(`/v2/billing/endpoints?endpointId=${slug}`));
  expect(report.metadata.totals.totalAmount).toBe(totalMicros / 1e6);
  const rows = report.records as Record<string, any>[]; // one a day bucket: two if the jobs straddle midnight UTC
  expect(rows.every((b) => b.endpointId === slug && b.slug === slug && b.gpuAmount === 0)).toBe(true);
  expect(rows.reduce((n, b) => n + Math.round(b.totalAmount * 1e6), 0)).toBe(totalMicros);
  const account = await json(await asUser('/v2/account'));
  expect(Math.round(account.clientBalance * 1e6)).toBe(START_BALANCE * 1e6 - totalMicros);

  // the operator's own account is not charged, and another account cannot read the user's job
  expect((await cp.services.store.list('billing', {})).filter((r) => r.kind === 'public-endpoint' && r.accountId !== user.accountId)).toEqual([]);
  const other = await cp.newAccount();
  expect((await cp.api(`/v2/${slug}/status/${viaSdk.id}`, { key: other.key })).status).toBe(404);
}, 300_000);

test('a hostile input through the catalog (an option as the voice) is FAILED with the reason, and costs nothing', async () => {
  const before = (await cp.services.store.list('billing', {})).filter((r) => r.accountId === user.accountId).length;
  let job = await sdkEndpoint.runSync({ input: { text: 'hi', voice: '--stdout' } }, 60_000);
  if (!['COMPLETED', 'FAILED'].includes(job.status)) job = await sdkEndpoint.statusSync(job.id as string, 60_000);
  expect(job.status).toBe('FAILED');
  expect(String(job.error)).toContain("input.voice: '--stdout' is not an installed voice");
  await new Promise((r) => setTimeout(r, 500));
  expect((await cp.services.store.list('billing', {})).filter((r) => r.accountId === user.accountId).length).toBe(before);
}, 120_000);

test('the image fixture published per megapixel: runpod-python gets image_url, the PNG decodes at the requested size, and the charge is width × height ÷ 10⁶ × usdPerUnit', async () => {
  const before = (await cp.services.store.list('billing', {})).filter((r) => r.kind === 'public-endpoint' && r.accountId === user.accountId).length;
  const out = await py.call({ op: 'run_sync', endpoint: imageSlug, apiKey: user.key, request: { input: { prompt: 'a fox', width: 200, height: 100 } }, timeout: 120 });
  expect(out).not.toHaveProperty('image_base64');
  expect(out).toMatchObject({ mime_type: 'image/png', fixture: true, usage: { units: 0.02, unit: 'megapixel' }, cost: 0.001 });
  const res = await fetch(out.image_url as string);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/png');
  const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
  expect([png.width, png.height]).toEqual([200, 100]);
  await expect
    .poll(async () => (await cp.services.store.list('billing', {})).filter((r) => r.kind === 'public-endpoint' && r.accountId === user.accountId).length, { timeout: 10_000 })
    .toBe(before + 1);
  const rec = (await cp.services.store.list('billing', {})).find((r) => r.kind === 'public-endpoint' && r.accountId === user.accountId && r.resourceId === imageSlug);
  expect(rec).toMatchObject({ amountMicros: 1000, units: 0.02 });
}, 240_000);
