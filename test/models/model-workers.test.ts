// The model worker images of models/ (test/harness/model-images.ts), run as the workers of real
// endpoints: the autoscaler starts each from zero on an sshd test host, the jobs go through the job
// interface, and the outputs are decoded here: the espeak-ng TTS worker (runpod-python's own worker)
// answers a WAV whose length is the `usage.units` it reports, and refuses hostile input without
// passing it to espeak-ng as an option; the image fixture (gpufleet's worker SDK) answers a PNG from
// which the prompt reads back.
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GLYPH_H, GLYPH_W, glyph } from '../../models/image-fixture/font-5x7.ts';
import { layout, SCALE } from '../../models/image-fixture/render.ts';
import { isWorker } from '../../model/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, enrolTestHost, FIXTURE_GPUS, runDocker, startTestHost, type TestHost } from '../harness/index.ts';
import { ensureImageFixtureImage, ensureTtsEspeakImage } from '../harness/model-images.ts';
import { parseWav, rms } from './wav.ts';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let user: { accountId: string; key: string };
const endpoints = { tts: '', image: '' };

const json = async (res: Response) => (await res.json()) as Record<string, any>;
const asUser = (p: string, init: Parameters<TestControlPlane['api']>[1] = {}) => cp.api(p, { key: user.key, ...init });

/** runsync on an endpoint until the job is final (a cold worker may outlast one wait) */
async function runJob(endpoint: string, input: unknown): Promise<Record<string, any>> {
  let job = await json(await asUser(`/v2/${endpoint}/runsync?wait=90000`, { method: 'POST', json: { input } }));
  for (let i = 0; i < 3 && !['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(job.status); i++) {
    job = await json(await asUser(`/v2/${endpoint}/status-sync/${job.id}?wait=60000`));
  }
  return job;
}

async function endpointOf(image: string, name: string): Promise<string> {
  const tpl = await json(await asUser('/v2/templates', { method: 'POST', json: { name, image, disk: 1, serverless: true } }));
  const res = await asUser('/v1/endpoints', {
    method: 'POST',
    json: { templateId: tpl.id, name, gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 120 },
  });
  const ep = await json(res);
  expect(res.status, JSON.stringify(ep)).toBe(200);
  return ep.id as string;
}

beforeAll(async () => {
  const [tts, image] = await Promise.all([ensureTtsEspeakImage(), ensureImageFixtureImage()]);
  host = await startTestHost({ name: `models-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-models' });
  user = await cp.newAccount();
  endpoints.tts = await endpointOf(tts, 'tts-espeak');
  endpoints.image = await endpointOf(image, 'image-fixture');
}, 600_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe('tts-espeak (runpod-python worker + espeak-ng)', () => {
  test('speech from text: a 22 kHz mono 16-bit PCM WAV, not silent, whose duration (RIFF data ÷ byte rate) is exactly usage.units; twice the speed, shorter audio', async () => {
    const text = 'Hello from gpufleet. This sentence was spoken by e speak on a test host.';
    const job = await runJob(endpoints.tts, { text, voice: 'en' });
    expect(job, JSON.stringify(job).slice(0, 500)).toMatchObject({ status: 'COMPLETED', output: { mime_type: 'audio/wav', voice: 'en', sample_rate: 22050 } });
    const wav = parseWav(Buffer.from(job.output.audio_base64 as string, 'base64'));
    expect(wav).toMatchObject({ format: 1, channels: 1, sampleRate: 22050, bitsPerSample: 16, byteRate: 44100 });
    expect(job.output.usage).toEqual({ units: wav.seconds });
    expect(wav.seconds).toBeGreaterThan(2);
    expect(wav.seconds).toBeLessThan(15);
    expect(rms(wav.samples)).toBeGreaterThan(500);

    const fast = await runJob(endpoints.tts, { text, voice: 'en-us', speed: 2 });
    expect(fast.status).toBe('COMPLETED');
    const fastWav = parseWav(Buffer.from(fast.output.audio_base64 as string, 'base64'));
    expect(fast.output.usage.units).toBe(fastWav.seconds);
    expect(fastWav.seconds).toBeLessThan(wav.seconds * 0.75);
  }, 240_000);

  test('text that looks like options ("--version -w /tmp/injected.wav …") is spoken, not parsed: COMPLETED with longer speech, and no file written in the worker container', async () => {
    const plain = await runJob(endpoints.tts, { text: 'hello' });
    const hostile = await runJob(endpoints.tts, { text: '--version -w /tmp/injected.wav --stdout hello' });
    expect(hostile.status, JSON.stringify(hostile).slice(0, 500)).toBe('COMPLETED');
    const wav = parseWav(Buffer.from(hostile.output.audio_base64 as string, 'base64'));
    expect(hostile.output.usage.units).toBe(wav.seconds);
    expect(wav.seconds).toBeGreaterThan(parseWav(Buffer.from(plain.output.audio_base64 as string, 'base64')).seconds + 1);
    const worker = (await cp.services.store.list('pods', { endpointId: endpoints.tts })).find(isWorker);
    expect(worker).toBeDefined();
    const ls = await runDocker(['exec', `gpufleet-${worker!.id}`, 'ls', '-A', '/tmp']);
    expect(ls.stdout).not.toContain('injected');
  }, 240_000);

  test.each([
    ['text over the length bound', { text: 'a'.repeat(2001) }, 'input.text: at most 2000 characters (got 2001)'],
    ['a megabyte of text', { text: '-'.repeat(1_000_000) }, 'input.text: at most 2000 characters (got 1000000)'],
    ['empty text', { text: '   ' }, 'input.text: required, a non-empty string'],
    ['a NUL byte in the text', { text: 'hello\u0000world' }, 'input.text: control characters are not allowed'],
    ['a voice that is an option', { text: 'hi', voice: '-w/tmp/x' }, "input.voice: '-w/tmp/x' is not an installed voice"],
    ['a voice with shell syntax', { text: 'hi', voice: 'en; touch /tmp/x' }, "input.voice: 'en; touch /tmp/x' is not an installed voice"],
    ['a well-formed voice that is not installed', { text: 'hi', voice: 'xx-zz' }, "input.voice: 'xx-zz' is not an installed voice"],
    ['a speed that is a string', { text: 'hi', speed: '-s 999' }, 'input.speed: a number from 0.5 to 2.5'],
    ['a speed out of range', { text: 'hi', speed: 40 }, 'input.speed: a number from 0.5 to 2.5'],
    ['an unknown field', { text: 'hi', args: ['-w', '/tmp/x'] }, 'input.args: unknown field'],
  ])('%s: FAILED with the reason as the error, no audio', async (_name, input, reason) => {
    const job = await runJob(endpoints.tts, input);
    expect(job.status).toBe('FAILED');
    expect(String(job.error)).toContain(reason);
    expect(JSON.stringify(job.output ?? {})).not.toContain('audio_base64');
  }, 240_000);
});

describe('image-fixture (TEST FIXTURE; gpufleet worker SDK)', () => {
  /** reads the characters back from the glyph cells: each scaled font pixel sampled at its centre */
  function readBack(png: PNG, prompt: string): string {
    const l = layout(prompt, png.width, png.height);
    const lit = (x: number, y: number) => {
      const o = (y * png.width + x) * 4;
      return [png.data[o], png.data[o + 1], png.data[o + 2]].join() === l.ink.join();
    };
    const known = [...Array(96).keys()].map((i) => String.fromCharCode(32 + i));
    return l.chars
      .map(({ x, y }) => {
        const cols = [...Array(GLYPH_W).keys()].map((gx) =>
          [...Array(GLYPH_H).keys()].reduce((bits, gy) => bits | (lit(x + gx * SCALE + SCALE / 2, y + gy * SCALE + SCALE / 2) ? 1 << gy : 0), 0),
        );
        return known.find((ch) => glyph(ch).join() === cols.join()) ?? '\u25a1';
      })
      .join('');
  }

  test('a PNG of the requested size, coloured from the prompt, from which the prompt reads back; usage.units 1 (an image)', async () => {
    const prompt = 'A red fox, 42 GPUs!';
    const job = await runJob(endpoints.image, { prompt, width: 320, height: 160 });
    expect(job, JSON.stringify(job).slice(0, 500)).toMatchObject({ status: 'COMPLETED', output: { mime_type: 'image/png', width: 320, height: 160, fixture: true, usage: { units: 1 } } });
    const png = PNG.sync.read(Buffer.from(job.output.image_base64 as string, 'base64'));
    expect([png.width, png.height]).toEqual([320, 160]);
    const l = layout(prompt, 320, 160);
    expect([...png.data.subarray(0, 3)]).toEqual([...l.background]);
    expect(readBack(png, prompt)).toBe(prompt.toUpperCase());

    const other = await runJob(endpoints.image, { prompt: 'a blue whale' });
    const png2 = PNG.sync.read(Buffer.from(other.output.image_base64 as string, 'base64'));
    expect([png2.width, png2.height]).toEqual([512, 512]);
    expect(readBack(png2, 'a blue whale')).toBe('A BLUE WHALE');
    expect([...png2.data.subarray(0, 3)]).not.toEqual([...png.data.subarray(0, 3)]);
  }, 240_000);

  test.each([
    ['no prompt', { width: 100 }, 'input.prompt: required'],
    ['a width out of range', { prompt: 'x', width: 100000 }, 'input.width: an integer from 64 to 1024'],
    ['a prompt over the bound', { prompt: 'x'.repeat(1001) }, 'input.prompt: at most 1000 characters'],
  ])('%s: FAILED with the reason as the error', async (_name, input, reason) => {
    const job = await runJob(endpoints.image, input);
    expect(job.status).toBe('FAILED');
    expect(String(job.error)).toContain(reason);
  }, 120_000);
});
