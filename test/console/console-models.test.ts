// Public models in the console, in Chromium: the operator publishes the espeak-ng TTS worker (per
// second of audio) and the image fixture (per megapixel), as test/models/public-models-e2e.test.ts
// does; a user runs each from its form on the Models page and sees its media inline with its cost:
// the image shows (decoded at the size asked for), the audio is an <audio> with controls whose
// source, on the console's own origin, is a WAV Chromium decodes (its duration known).
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Locator } from 'playwright-core';
import { axeViolations, newPage, openConsoleWorld, shot, signIn, type ConsoleWorld } from './console-world.ts';
import { dockerBridgeGateway, enrolTestHost } from '../harness/index.ts';
import { ensureImageFixtureImage, ensureTtsEspeakImage } from '../harness/model-images.ts';

const ttsSlug = `console-tts-${process.pid}`;
const imageSlug = `console-image-${process.pid}`;

let w: ConsoleWorld;
let user: { accountId: string; key: string };

async function publish(slug: string, template: Record<string, unknown>, pricing: Record<string, unknown>): Promise<void> {
  const tpl = (await (await w.cp.api('/v2/templates', { method: 'POST', json: template })).json()) as { id: string };
  const ep = await w.cp.api('/v1/endpoints', { method: 'POST', json: { templateId: tpl.id, name: slug, gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 120 } });
  expect(ep.status).toBe(200);
  const endpointId = ((await ep.json()) as { id: string }).id;
  const res = await w.cp.api('/v2/public-endpoints', { method: 'POST', json: { slug, endpointId, name: template.name, pricing } });
  expect(res.status, await res.clone().text()).toBe(201);
}

beforeAll(async () => {
  const [tts, fixture] = await Promise.all([ensureTtsEspeakImage(), ensureImageFixtureImage()]);
  // the workers put their media on the control plane's address on the Docker bridge, the console's origin here
  w = await openConsoleWorld('console-models', { host: await dockerBridgeGateway(), config: { consoleAllowHttp: true } });
  await enrolTestHost(w.cp, w.host, { dataCenterId: 'dc-console-models' });
  await publish(ttsSlug, { name: 'tts-espeak', image: tts, disk: 1, serverless: true }, { unit: 'second', usdPerUnit: 0.0441, maxUnitsPerJob: 120 });
  await publish(imageSlug, { name: 'image-fixture', image: fixture, disk: 1, serverless: true, env: { IMAGE_USAGE_UNIT: 'megapixel' } }, { unit: 'megapixel', usdPerUnit: 0.05, maxUnitsPerJob: 100 });
  user = await w.cp.newAccount('read_write', 25);
}, 600_000);

afterAll(async () => {
  await w?.close();
});

/** fills a model's form with `input` and runs it; answers its result once COMPLETED */
async function runModel(form: Locator, input: unknown): Promise<Locator> {
  await form.getByLabel('Input', { exact: true }).fill(JSON.stringify({ input }));
  await form.getByRole('button', { name: 'Run' }).click();
  const result = form.getByRole('status');
  await expect.poll(() => result.textContent(), { timeout: 240_000 }).toMatch(/COMPLETED/);
  return result;
}

test('each model runs from its form; the image shows and the audio plays inline, each with its cost', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.getByRole('link', { name: 'Models', exact: true }).click();
  const imageForm = page.getByRole('form', { name: 'image-fixture' });
  const ttsForm = page.getByRole('form', { name: 'tts-espeak' });
  await imageForm.waitFor({ timeout: 10_000 });
  expect(await imageForm.textContent()).toMatch(/Price: \$0\.050000 per megapixel, at most \$5\.0000 a job/);

  // the image: shown inline, decoded at the size asked for; the cost is width × height ÷ 10⁶ × the price
  const imageResult = await runModel(imageForm, { prompt: 'a fox in the console', width: 200, height: 100 });
  expect(await imageResult.textContent()).toMatch(/cost \$0\.001000/);
  const img = imageForm.getByRole('img', { name: 'Image output' });
  await expect.poll(() => img.evaluate((i) => (i as unknown as { naturalWidth: number }).naturalWidth), { timeout: 10_000 }).toBe(200);
  expect(await img.evaluate((i) => (i as unknown as { naturalHeight: number }).naturalHeight)).toBe(100);
  expect(new URL((await img.getAttribute('src'))!).origin).toBe(new URL(page.url()).origin);

  // the audio: an <audio> with controls on the console's origin, a WAV Chromium decodes; the cost is
  // the audio's seconds × the price (22050 Hz 16-bit mono: 44100 bytes a second, a micro-dollar a byte)
  const ttsResult = await runModel(ttsForm, { text: 'Hello from the console.' });
  const audio = ttsForm.locator('audio');
  expect(await audio.getAttribute('controls')).not.toBeNull();
  const src = (await audio.getAttribute('src'))!;
  expect(src).toMatch(/\/v2\/media\/\d+-[0-9a-f]{32}\.wav\?signature=/);
  expect(new URL(src).origin).toBe(new URL(page.url()).origin);
  await expect.poll(() => audio.evaluate((a) => (a as unknown as { readyState: number }).readyState), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
  const seconds = await audio.evaluate((a) => (a as unknown as { duration: number }).duration);
  expect(seconds).toBeGreaterThan(0.3);
  const media = await page.evaluate(`fetch(${JSON.stringify(src)}).then(async (r) => ({ type: r.headers.get('content-type'), bytes: (await r.arrayBuffer()).byteLength }))`) as { type: string; bytes: number };
  expect(media.type).toMatch(/^audio\/(wav|x-wav|wave)/);
  const cost = Number(/cost \$(\d+\.\d+)/.exec((await ttsResult.textContent())!)![1]);
  expect(cost).toBeCloseTo(seconds * 0.0441, 5);
  await shot(page, '26-models-media');
  expect(await axeViolations(page)).toEqual([]);
  await context.close();
}, 600_000);
