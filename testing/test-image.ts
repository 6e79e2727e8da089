// A tiny local image for pods in tests: no registry is reachable, so we `docker import` a root
// filesystem made of the static /bin/busybox plus one symlink per applet (sh, sleep, env, nc,
// httpd, ...). Built once per engine; concurrent builders (vitest workers) serialise on a lock dir.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importRootfs, runDocker } from './docker.ts';

export const TEST_IMAGE = 'gpufleet-test/busybox:latest';
/** a second, distinct image (different id, /etc/gpufleet-image says "alt") for image-change tests */
export const ALT_TEST_IMAGE = 'gpufleet-test/busybox:alt';

const BUSYBOX = '/bin/busybox';
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const building = new Map<string, Promise<string>>();

/** Ensures `gpufleet-test/busybox:latest` exists in the local engine; returns the image ref. */
export function ensureTestImage(): Promise<string> {
  return ensureImage(TEST_IMAGE, 'main');
}

/** Ensures the second tag `gpufleet-test/busybox:alt` exists (a different image id). */
export function ensureAltTestImage(): Promise<string> {
  return ensureImage(ALT_TEST_IMAGE, 'alt');
}

function ensureImage(ref: string, variant: string): Promise<string> {
  let p = building.get(ref);
  if (!p) {
    p = buildOnce(ref, variant).catch((e: unknown) => {
      building.delete(ref); // let a later call retry
      throw e;
    });
    building.set(ref, p);
  }
  return p;
}

async function imageExists(ref: string): Promise<boolean> {
  try {
    await runDocker(['image', 'inspect', '--format', '{{.Id}}', ref]);
    return true;
  } catch {
    return false;
  }
}

async function buildOnce(ref: string, variant: string): Promise<string> {
  if (await imageExists(ref)) return ref;
  const lock = join(tmpdir(), `gpufleet-test-image-${variant}.lock`);
  await acquireLock(lock);
  try {
    if (await imageExists(ref)) return ref; // another worker built it while we waited
    await buildImage(ref, variant);
    return ref;
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** mkdir is atomic: whoever creates the dir holds the lock. Locks older than 2 min are stale. */
async function acquireLock(lock: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      await mkdir(lock);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const st = await stat(lock).catch(() => null);
    if (st && Date.now() - st.mtimeMs > 120_000) await rm(lock, { recursive: true, force: true });
    if (Date.now() > deadline) throw new Error(`timed out waiting for image build lock ${lock}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function buildImage(ref: string, variant: string): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gpufleet-rootfs-'));
  try {
    for (const d of ['bin', 'etc', 'root', 'tmp', 'proc', 'sys', 'dev', 'var/tmp', 'usr/local/bin', 'home']) {
      await mkdir(join(root, d), { recursive: true });
    }
    // one directory of applets; the other standard bin dirs point at it so #!/usr/bin/env works
    await symlink('bin', join(root, 'sbin'));
    await symlink('../bin', join(root, 'usr', 'bin'));
    await symlink('../bin', join(root, 'usr', 'sbin'));
    await copyFile(BUSYBOX, join(root, 'bin', 'busybox'));
    const applets = (await capture(BUSYBOX, ['--list'])).split('\n').map((s) => s.trim());
    for (const a of applets) {
      if (a && a !== 'busybox' && !a.includes('/')) await symlink('busybox', join(root, 'bin', a));
    }
    await writeFile(join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
    await writeFile(join(root, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
    await writeFile(join(root, 'etc', 'gpufleet-image'), `${variant}\n`);
    await importRootfs(root, ref, ['CMD ["sh"]', `ENV ${PATH_ENV}`, `ENV GPUFLEET_TEST_IMAGE=${variant}`, 'WORKDIR /']);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function capture(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}`))));
  });
}
