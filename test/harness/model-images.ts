// The model worker images of models/ (docs/models.md), built for tests the way the test worker
// images are (worker-images.ts: `docker import` of a root filesystem, tagged by a hash of the inputs,
// built once per machine under a lock):
//   ensureTtsEspeakImage():    models/tts-espeak/handler.py under runpod-python's own worker, on the
//                              Python worker image's filesystem plus Debian's espeak-ng
//   ensureImageFixtureImage(): models/image-fixture (TEST FIXTURE: a PNG of the prompt) under
//                              gpufleet's worker SDK, laid out as the Node worker image
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDocker } from '../../testing/index.ts';
import { buildNodeWorkerImage, nodeWorkerInputs } from './node-worker-image.ts';
import { removeTree, trim } from './python-worker-image.ts';
import { importRootfs, InputHash, run, stepTimer } from './worker-image-build.ts';
import { ensure, ensurePythonWorkerImage, once } from './worker-images.ts';

export const TTS_ESPEAK_REPO = 'gpufleet-test/tts-espeak';
export const IMAGE_FIXTURE_REPO = 'gpufleet-test/image-fixture';
const MODELS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'models');
export const TTS_HANDLER = join(MODELS, 'tts-espeak', 'handler.py');
const IMAGE_FIXTURE_MAIN = join(MODELS, 'image-fixture', 'main.ts');
/** the Debian packages the TTS image adds to the Python worker image */
const TTS_PACKAGES = ['espeak-ng'];
const TTS_LAYOUT_VERSION = 'tts-espeak-1';
const TTS_APP = '/opt/models/tts-espeak';
const CHROOT_ENV = ['/usr/bin/env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', 'DEBIAN_FRONTEND=noninteractive', 'LANG=C.UTF-8'];

/**
 * Ensures the espeak-ng TTS worker image exists; resolves with its ref. Cold: the Python worker
 * image (about 1.5 min when it is missing too), then about 20 s more (export, apt-get, import).
 */
export function ensureTtsEspeakImage(): Promise<string> {
  return once('tts-espeak', async () => {
    const base = await ensurePythonWorkerImage();
    const hash = new InputHash().text(TTS_LAYOUT_VERSION).text(base).text(TTS_PACKAGES.join(' '));
    await hash.file(TTS_HANDLER);
    const ref = `${TTS_ESPEAK_REPO}:${hash.digest()}`;
    return ensure(ref, TTS_ESPEAK_REPO, 10 * 60_000, () => buildTtsEspeakImage(base, ref));
  });
}

/** Ensures the image fixture's worker image exists (a few seconds cold); resolves with its ref. */
export function ensureImageFixtureImage(): Promise<string> {
  return once('image-fixture', async () => {
    const inputs = await nodeWorkerInputs(IMAGE_FIXTURE_MAIN, IMAGE_FIXTURE_REPO);
    return ensure(inputs.ref, IMAGE_FIXTURE_REPO, 5 * 60_000, () => buildNodeWorkerImage(inputs));
  });
}

/** The Python worker image's files (docker export), plus espeak-ng from the Debian mirror, plus the handler. */
async function buildTtsEspeakImage(base: string, ref: string): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('building the TTS image needs root (chroot)');
  const root = join(await mkdtemp('/var/tmp/gpufleet-tts-espeak-'), 'rootfs');
  const lap = stepTimer('tts-espeak');
  try {
    await mkdir(root);
    await exportImage(base, root);
    lap('export the Python worker image');
    await copyFile('/etc/resolv.conf', join(root, 'etc', 'resolv.conf'));
    await run('chroot', [root, ...CHROOT_ENV, 'apt-get', 'update', '-qq']);
    await run('chroot', [root, ...CHROOT_ENV, 'apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...TTS_PACKAGES]);
    await run('chroot', [root, ...CHROOT_ENV, 'apt-get', 'clean']);
    lap('apt-get install espeak-ng');
    await mkdir(join(root, TTS_APP.slice(1)), { recursive: true });
    await copyFile(TTS_HANDLER, join(root, TTS_APP.slice(1), 'handler.py'));
    await rm(join(root, '.dockerenv'), { force: true });
    await trim(root);
    const config = await imageConfig(base);
    await importRootfs(root, ref, [
      ...config.env.map((e) => `ENV ${e}`),
      // the worker logs each handler output at DEBUG: megabytes of base64 per job
      'ENV RUNPOD_LOG_LEVEL=INFO',
      `WORKDIR ${TTS_APP}`,
      `CMD ["python3", "${TTS_APP}/handler.py"]`,
    ]);
    lap('docker import');
  } finally {
    await removeTree(dirname(root));
  }
}

/** `docker export` of a container created (not started) from `image`, unpacked into `root`. */
async function exportImage(image: string, root: string): Promise<void> {
  const cid = (await runDocker(['create', image])).stdout.trim();
  try {
    await new Promise<void>((resolve, reject) => {
      const exp = spawn('docker', ['export', cid], { stdio: ['ignore', 'pipe', 'pipe'] });
      const tar = spawn('tar', ['-x', '-C', root, '--numeric-owner', '-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
      exp.stdout.pipe(tar.stdin);
      let errText = '';
      exp.stderr.on('data', (d: Buffer) => (errText += d.toString()));
      tar.stderr.on('data', (d: Buffer) => (errText += d.toString()));
      exp.on('error', reject);
      tar.on('error', reject);
      const closed = (p: typeof exp | typeof tar) => new Promise<number | null>((r) => p.on('close', r));
      void Promise.all([closed(exp), closed(tar)]).then(([e, t]) =>
        e === 0 && t === 0 ? resolve() : reject(new Error(`docker export ${image} failed (export ${e}, tar ${t}): ${errText.trim()}`)),
      );
    });
  } finally {
    await runDocker(['rm', '-f', cid]).catch(() => undefined);
  }
}

/** The env of an image's config, `KEY=value` each (docker export drops the config). */
async function imageConfig(image: string): Promise<{ env: string[] }> {
  const { stdout } = await runDocker(['image', 'inspect', '--format', '{{json .Config.Env}}', image]);
  const env = JSON.parse(stdout) as string[] | null;
  // a value with a space would need quoting in an ENV change; the worker image has none
  for (const e of env ?? []) if (/\s/.test(e)) throw new Error(`${image}: env ${e} holds white space`);
  return { env: env ?? [] };
}
