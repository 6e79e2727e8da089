// Public model endpoints through a listening control plane (docs/public-endpoints.md, docs/media.md):
// the operator publishes its endpoints (in-process workers of the TypeScript worker SDK speaking the
// real worker protocol, returning media as base64), and other accounts call them by slug with
// runpod-sdk (npm, unmodified). Media come back as signed URLs served by the control plane; the media
// clock is injected so 7 days can pass; costs are charged to the caller and add up exactly in billing.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registeredRoutes } from '../../../api/auth/request-guard.ts';
import { ADMIN_KEY } from '../../harness/control-plane.ts';
import { eventually, handlerLog, startJobWorld, type JobWorld } from '../../api/jobs/in-process-workers.ts';
import { loadRunpodSdk, type RunpodEndpoint, type RunpodSdkFactory } from '../../api/jobs/runpod-sdk.ts';
import { makePng, makeWav } from './media-fixtures.ts';

const DAY = 86_400_000;
let now = Date.now();
let world: JobWorld;
let sdk: RunpodSdkFactory;
/** the operator's endpoints behind the models */
let imageEp: string;
let ttsEp: string;
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
/** everything the control plane logged (trace level) */
let log = '';

const IMAGE = { slug: 'test-image-model', unit: 'image', usdPerUnit: 0.0031, maxUnitsPerJob: 20 } as const;
const TTS = { slug: 'test-tts', unit: 'second', usdPerUnit: 0.0005, maxUnitsPerJob: 600 } as const;

const publish = (body: unknown, key = ADMIN_KEY) => world.cp.api('/v2/public-endpoints', { method: 'POST', key, json: body });
const model = (slug: string, key: string): RunpodEndpoint => sdk(key, { baseUrl: `${world.cp.url}/v2` }).endpoint(slug)!;
const json = async (r: Response) => (await r.json()) as any;

let operatorTemplate: string | undefined;
/** a new QUEUE endpoint of the operator's (one template for all of them) */
async function operatorEndpoint(): Promise<string> {
  operatorTemplate ??= (await json(await world.cp.api('/v2/templates', { method: 'POST', json: { name: 'model-fixture', image: 'busybox', serverless: true } }))).id as string;
  const res = await world.cp.api('/v1/endpoints', { method: 'POST', json: { templateId: operatorTemplate, gpuTypeIds: ['ADA_24'] } });
  expect(res.status).toBe(200);
  return (await json(res)).id as string;
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      log += chunk.toString();
      done();
    },
  });
  world = await startJobWorld({ mediaClock: () => now, logger: pino({ level: 'trace' }, sink), config: { logLevel: 'trace' } });
  sdk = await loadRunpodSdk();
  alice = world.user;
  bob = await world.cp.newAccount('read_write', 100);
  imageEp = await operatorEndpoint();
  ttsEp = await operatorEndpoint();
  await world.startWorker(imageEp, { concurrency: 4 });
  await world.startWorker(ttsEp, { concurrency: 2 });
  for (const [m, ep] of [[IMAGE, imageEp], [TTS, ttsEp]] as const) {
    const r = await publish({ slug: m.slug, endpointId: ep, name: m.slug, description: 'a test fixture', pricing: { unit: m.unit, usdPerUnit: m.usdPerUnit, maxUnitsPerJob: m.maxUnitsPerJob } });
    expect(r.status, await r.clone().text()).toBe(201);
  }
});
afterAll(async () => world?.close());

const imageOutput = (units?: number) => ({ image_base64: makePng(64, 32).toString('base64'), mime_type: 'image/png', seed: 7, ...(units !== undefined ? { usage: { units } } : {}) });

describe('the catalog', () => {
  test('every account lists it; only operators see the backing endpoint', async () => {
    const asBob = await json(await world.cp.api('/v2/public-endpoints', { key: bob.key }));
    expect(asBob.map((e: { slug: string }) => e.slug)).toEqual([IMAGE.slug, TTS.slug]);
    expect(asBob[0]).toEqual({ id: IMAGE.slug, slug: IMAGE.slug, name: IMAGE.slug, description: 'a test fixture', pricing: { unit: 'image', usdPerUnit: 0.0031, maxUnitsPerJob: 20 }, createdAt: expect.any(String) });
    const asOperator = await json(await world.cp.api(`/v2/public-endpoints/${IMAGE.slug}`));
    expect(asOperator.endpointId).toBe(imageEp);
    expect((await world.cp.api('/v2/public-endpoints/nope-nope', { key: bob.key })).status).toBe(404);
  });

  test('only operators publish and withdraw', async () => {
    const admin = await world.cp.newAccount('admin', 10);
    const ep = await world.newEndpoint(admin.key);
    const r = await publish({ slug: 'tenant-model', endpointId: ep, name: 'x', pricing: { unit: 'request', usdPerUnit: 1 } }, admin.key);
    expect(r.status).toBe(403);
    expect((await world.cp.api(`/v2/public-endpoints/${IMAGE.slug}`, { method: 'DELETE', key: admin.key })).status).toBe(403);
  });

  test('slugs that are route names are refused: every first segment the API registers under /v1 and /v2, and at the top', async () => {
    const names = [...new Set(registeredRoutes(world.cp.app).map((r) => /^(?:\/v\d+)?\/([^/:*]+)/.exec(r.url)?.[1]).filter((x): x is string => x !== undefined))];
    expect(names).toEqual(expect.arrayContaining(['pods', 'serverless', 'hosts', 'endpoints', 'accounts', 'billing', 'public-endpoints', 'media', 'graphql', 'healthz']));
    const ep = await operatorEndpoint();
    for (const slug of names.filter((n) => n.length >= 3 && /^[a-z0-9-]+$/.test(n))) {
      const r = await publish({ slug, endpointId: ep, name: 'x', pricing: { unit: 'request', usdPerUnit: 1 } });
      expect(r.status, slug).toBe(422);
      expect((await json(r)).errors, slug).toEqual([`$.slug: ${slug} is a route name of this API`]);
    }
  });

  test('slug grammar, and the rules of the endpoint behind it', async () => {
    const ep = await operatorEndpoint();
    const body = (over: Record<string, unknown>) => ({ slug: 'fresh-model', endpointId: ep, name: 'x', pricing: { unit: 'token', usdPerUnit: 0.000002, maxUnitsPerJob: 100_000 }, ...over });
    for (const slug of ['Flux', 'ab', '-abc', 'abc-', 'a_b', 'a b', 'x'.repeat(65), 'ü-model']) expect((await publish(body({ slug }))).status, slug).toBe(422);
    const bad = await json(await publish(body({ pricing: { unit: 'hour', usdPerUnit: -1 }, extra: 1 })));
    expect(bad.errors).toEqual(expect.arrayContaining(['$.extra: unknown property', '$.pricing.unit: must be one of "image", "megapixel", "second", "token", "request"']));
    // a unit price without the most units a job is charged: no hold could be made (docs/security.md)
    const uncapped = await publish(body({ pricing: { unit: 'token', usdPerUnit: 0.000002 } }));
    expect(uncapped.status).toBe(422);
    expect((await json(uncapped)).errors).toEqual(['$.pricing.maxUnitsPerJob: is required for unit "token"']);
    expect((await json(await publish(body({ pricing: { unit: 'token', usdPerUnit: 1000, maxUnitsPerJob: 1e9 } })))).errors).toEqual([
      '$.pricing.maxUnitsPerJob: maxUnitsPerJob × usdPerUnit is more than a job may cost',
    ]);
    // another account's endpoint is 404, as if it did not exist
    const alicesEp = await world.newEndpoint(alice.key);
    expect((await publish(body({ endpointId: alicesEp }))).status).toBe(404);
    // taken slug, an endpoint's id as slug, an endpoint already published
    expect((await publish(body({ slug: IMAGE.slug }))).status).toBe(409);
    expect((await publish(body({ slug: alicesEp }))).status).toBe(409);
    expect((await publish(body({ endpointId: imageEp }))).status).toBe(409);
    const ok = await publish(body({}));
    expect(ok.status).toBe(201);
    expect((await world.cp.api('/v2/public-endpoints/fresh-model', { method: 'DELETE' })).status).toBe(204);
    expect((await world.cp.api('/v2/public-endpoints/fresh-model', { method: 'DELETE' })).status).toBe(404);
  });

  test('deleting the backing endpoint withdraws the model: the slug is unknown at once', async () => {
    const ep = await operatorEndpoint();
    expect((await publish({ slug: 'short-lived', endpointId: ep, name: 'x', pricing: { unit: 'request', usdPerUnit: 0.5 } })).status).toBe(201);
    const { id } = await json(await world.cp.api('/v2/short-lived/run', { method: 'POST', key: alice.key, json: { input: { sleep_ms: 60_000 } } }));
    expect((await world.cp.api(`/v2/short-lived/status/${id}`, { key: alice.key })).status).toBe(200);
    expect((await world.cp.api(`/v1/endpoints/${ep}`, { method: 'DELETE' })).status).toBe(204);
    expect((await world.cp.api('/v2/public-endpoints/short-lived', { key: alice.key })).status).toBe(404);
    expect((await world.cp.api(`/v2/short-lived/status/${id}`, { key: alice.key })).status).toBe(404);
    expect((await world.cp.api('/v2/short-lived/run', { method: 'POST', key: alice.key, json: { input: {} } })).status).toBe(404);
  });
});

describe('calling a model by slug (runpod-sdk)', () => {
  test('run then status: the image becomes a signed URL the control plane serves; the output reports usage and cost', async () => {
    const ep = model(IMAGE.slug, alice.key);
    const { id } = await ep.run({ input: { output: imageOutput() } });
    const done = await eventually(async () => {
      const s = await ep.status(id);
      return s.completed ? s : null;
    });
    expect(done.status).toBe('COMPLETED');
    expect(done.output).toEqual({
      image_url: expect.stringMatching(new RegExp(`^${world.cp.url}/v2/media/\\d+-[0-9a-f]{32}\\.png\\?signature=[A-Za-z0-9_-]{43}$`)),
      mime_type: 'image/png',
      seed: 7,
      usage: { units: 1, unit: 'image' },
      cost: 0.0031,
    });
    const img = await fetch(done.output.image_url);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(img.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await img.arrayBuffer()).equals(makePng(64, 32))).toBe(true);
    // no API key is needed, and the URL names no key
    expect(done.output.image_url).not.toContain(alice.key);
    // players seek with byte ranges
    const whole = makePng(64, 32);
    const part = await fetch(done.output.image_url, { headers: { range: 'bytes=8-15' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 8-15/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(8, 16))).toBe(true);
    const past = await fetch(done.output.image_url, { headers: { range: `bytes=${whole.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${whole.length}`);
    await past.arrayBuffer();
  });

  test('runSync: a WAV priced per second is measured by the platform (2.5 s → 0.00125 USD)', async () => {
    const r = await model(TTS.slug, bob.key).runSync({ input: { output: { audio_base64: makeWav(2.5).toString('base64'), mime_type: 'audio/wav' } } }, 30_000);
    expect(r).toMatchObject({ status: 'COMPLETED', output: { audio_url: expect.stringContaining('.wav?signature='), usage: { units: 2.5, unit: 'second' }, cost: 0.00125 } });
    const wav = await fetch(r.output.audio_url);
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await wav.arrayBuffer()).equals(makeWav(2.5))).toBe(true);
  });

  test('stream by slug: the chunks arrive in order, untouched; the finished job still reports its cost', async () => {
    const ep = model(IMAGE.slug, alice.key);
    const items = [{ token: 'a' }, { image_base64: 'not converted in a chunk' }, { token: 'c' }];
    const { id } = await ep.run({ input: { stream: items, stream_delay_ms: 50 } });
    const got: unknown[] = [];
    for await (const chunk of ep.stream(id)) got.push(chunk);
    expect(got).toEqual(items.map((output) => ({ output })));
    const done = await eventually(async () => {
      const st = await ep.status(id);
      return st.completed ? st : null;
    });
    // an image model without an image and without usage counts 0 images
    expect(done.output).toMatchObject({ usage: { units: 0, unit: 'image' }, cost: 0 });
  });

  test("the job is the caller's: another account's status, cancel and stream are 404, and so is the backing endpoint", async () => {
    const { id } = await model(IMAGE.slug, alice.key).run({ input: { sleep_ms: 30_000 } });
    for (const p of [`status/${id}`, `stream/${id}`]) expect((await world.cp.api(`/v2/${IMAGE.slug}/${p}`, { key: bob.key })).status, p).toBe(404);
    expect((await world.cp.api(`/v2/${IMAGE.slug}/cancel/${id}`, { method: 'POST', key: bob.key })).status).toBe(404);
    expect((await world.cp.api(`/v2/${imageEp}/status/${id}`, { key: bob.key })).status).toBe(404);
    expect((await world.cp.api(`/v2/${imageEp}/run`, { method: 'POST', key: bob.key, json: { input: {} } })).status).toBe(404);
    // the endpoint-wide verbs are not a caller's
    expect((await world.cp.api(`/v2/${IMAGE.slug}/health`, { key: alice.key })).status).toBe(404);
    expect((await world.cp.api(`/v2/${IMAGE.slug}/purge-queue`, { method: 'POST', key: alice.key })).status).toBe(404);
    // the caller cancels its own job; it costs nothing
    await eventually(async () => handlerLog.started.includes(id), 10_000, 'the job to start');
    expect(await model(IMAGE.slug, alice.key).cancel(id)).toMatchObject({ id, status: 'CANCELLED' });
    await new Promise((r) => setTimeout(r, 200));
    expect((await world.cp.services.store.list('billing', { jobId: id }))).toEqual([]);
  });

  test('a refused output fails the job with the reason, stores nothing and costs nothing', async () => {
    const mediaDir = path.join(world.cp.dataDir, 'media');
    const before = await readdir(mediaDir).catch(() => []);
    for (const [output, reason] of [
      [{ image_base64: 'not base64 at all!', mime_type: 'image/png' }, '$.image_base64: is not base64'],
      [{ image_base64: Buffer.from('<html><script>x</script>').toString('base64'), mime_type: 'text/html' }, '$.image_base64: media type text/html is not served'],
      [{ image_base64: makeWav(0.1).toString('base64'), mime_type: 'audio/wav' }, '$.image_base64: media type audio/wav is not an image type'],
      [{ image_base64: makePng(2, 2).toString('base64'), audio_base64: 'UklG', mime_type: 'image/png' }, '$.audio_base64: media type image/png is not an audio type'],
      [{ usage: { units: -1 } }, '$.usage.units: must be a number from 0 to 1000000000'],
      [{ usage: { units: 1e300 } }, '$.usage.units: must be a number from 0 to 1000000000'],
    ] as const) {
      const r = await model(IMAGE.slug, alice.key).runSync({ input: { output } }, 30_000);
      expect(r.status, reason).toBe('FAILED');
      expect(r.error).toBe(`the output of public model ${IMAGE.slug} was refused: ${reason}`);
      expect(await world.cp.services.store.list('billing', { jobId: r.id })).toEqual([]);
    }
    expect(await readdir(mediaDir).catch(() => [])).toEqual(before);
  });

  test('a non-object output is wrapped; priced per request without usage it counts 1', async () => {
    const ep = await operatorEndpoint();
    await world.startWorker(ep);
    expect((await publish({ slug: 'test-echo', endpointId: ep, name: 'echo', pricing: { unit: 'request', usdPerUnit: 0.01 } })).status).toBe(201);
    const r = await model('test-echo', alice.key).runSync({ input: { output: 'hello' } }, 30_000);
    expect(r.output).toEqual({ result: 'hello', usage: { units: 1, unit: 'request' }, cost: 0.01 });
  });
});

describe('costs and credits', () => {
  test("each job is charged to its caller once; the costs add up exactly in /v2/billing/endpoints and in the balance", async () => {
    const carol = await world.cp.newAccount('read_write', 50);
    const ep = model(IMAGE.slug, carol.key);
    const units = [1, 2, 3, 0.333333, 7, 1 / 3, 0.1, 0.2, 12.5, 0];
    const outs = await Promise.all(units.map((u) => ep.runSync({ input: { output: imageOutput(u) } }, 30_000)));
    expect(outs.every((o) => o.status === 'COMPLETED')).toBe(true);
    const micros = outs.map((o) => Math.round(o.output.cost * 1e6));
    // each cost is units × price rounded to a micro-dollar
    expect(micros).toEqual(units.map((u) => Math.round(Number((u * IMAGE.usdPerUnit * 1e6).toPrecision(12)))));
    const expected = micros.reduce((a, b) => a + b, 0);
    await eventually(async () => (await world.cp.services.store.list('billing', { accountId: carol.accountId })).length === units.length, 10_000, 'every charge');
    const bill = await json(await world.cp.api(`/v2/billing/endpoints?endpointId=${IMAGE.slug}&bucketSize=day`, { key: carol.key }));
    expect(bill.records.every((r: { slug: string; endpointId: string }) => r.slug === IMAGE.slug && r.endpointId === IMAGE.slug)).toBe(true);
    const sum = bill.records.reduce((a: number, r: { totalAmount: number }) => a + Math.round(r.totalAmount * 1e6), 0);
    expect(sum).toBe(expected);
    expect(Math.round(bill.metadata.totals.totalAmount * 1e6)).toBe(expected);
    expect(bill.metadata.totals.totalAmount).toBe(expected / 1e6);
    const acct = await json(await world.cp.api('/v2/account', { key: carol.key }));
    expect(acct.usage).toBe(expected / 1e6);
    expect(acct.clientBalance).toBe(Math.round(50e6 - expected) / 1e6);
    // the serverless-only view has none of it; another account sees none of it
    expect((await json(await world.cp.api('/v2/billing/serverless', { key: carol.key }))).records).toEqual([]);
    expect((await json(await world.cp.api(`/v2/billing/endpoints?endpointId=${IMAGE.slug}`, { key: bob.key }))).records).toEqual([]);
  });

  test("the operator's own calls show a cost but are not charged", async () => {
    const r = await model(IMAGE.slug, ADMIN_KEY).runSync({ input: { output: imageOutput(2) } }, 30_000);
    expect(r.output.cost).toBe(0.0062);
    await new Promise((res) => setTimeout(res, 300));
    expect(await world.cp.services.store.list('billing', { jobId: r.id })).toEqual([]);
  });

  test('a caller without credits is refused (402) before anything runs; a charge that uses them up stops the next job', async () => {
    const broke = await world.cp.newAccount('read_write', 0);
    const started = handlerLog.started.length;
    const r = await world.cp.api(`/v2/${IMAGE.slug}/run`, { method: 'POST', key: broke.key, json: { input: { output: imageOutput() } } });
    expect(r.status).toBe(402);
    expect((await json(r)).title).toBe('Payment Required');
    expect(handlerLog.started.length).toBe(started);

    // the hold is 20 images × 0.0031 = 0.062 USD: it fits 0.07, not what is left after a 12-image job
    const tight = await world.cp.newAccount('read_write', 0.07);
    const first = await model(IMAGE.slug, tight.key).runSync({ input: { output: imageOutput(12) } }, 30_000);
    expect(first.output.cost).toBe(0.0372);
    await eventually(async () => (await world.cp.services.store.list('billing', { jobId: first.id })).length === 1, 10_000, 'the charge');
    const second = await world.cp.api(`/v2/${IMAGE.slug}/runsync`, { method: 'POST', key: tight.key, json: { input: { output: imageOutput() } } });
    expect(second.status).toBe(402);
  });
});

describe('media URLs', () => {
  test('altered URLs are 403; 7 days after generation the URL is 410 and the sweeper has deleted the bytes', async () => {
    const r = await model(TTS.slug, alice.key).runSync({ input: { output: { audio_base64: makeWav(0.5).toString('base64') } } }, 30_000);
    expect(r.output.usage).toEqual({ units: 0.5, unit: 'second' }); // type recognised from the bytes
    const url = new URL(r.output.audio_url);
    const key = url.pathname.split('/').pop()!;
    const sig = url.searchParams.get('signature')!;
    const at = (p: string, s: string | null) => fetch(`${world.cp.url}/v2/media/${p}${s === null ? '' : `?signature=${s}`}`);
    const statusOf = async (r: Promise<Response>) => {
      const res = await r;
      await res.arrayBuffer();
      return res.status;
    };
    expect(await statusOf(at(key, sig))).toBe(200);
    const otherSig = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    const later = key.replace(/^\d+/, (s) => String(Number(s) + 7 * 86_400));
    for (const [p, s] of [[key, otherSig], [key, null], [later, sig], [key.replace('.wav', '.png'), sig]] as const) {
      const res = await at(p, s);
      expect(res.status, `${p} ${s}`).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect(await statusOf(at('..%2F..%2Fsecret.key', sig))).toBe(404);
    const file = path.join(world.cp.dataDir, 'media', key);
    expect((await readdir(path.dirname(file))).includes(key)).toBe(true);

    now += 7 * DAY - 5_000;
    expect(await statusOf(at(key, sig))).toBe(200);
    now += 5_000;
    const gone = await at(key, sig);
    expect(gone.status).toBe(410);
    expect((await json(gone)).detail).toMatch(/expired/);
    await world.cp.services.media.sweep();
    expect((await readdir(path.dirname(file))).includes(key)).toBe(false);
    // the requests were logged, their signatures were not
    expect(log).toContain(`/v2/media/${key}?signature=[Redacted]`);
    expect(log).not.toContain(sig);
  });
});
