// The Python test worker image: runpod-python's own worker, unmodified, on Debian bookworm, built as
// ../shared/peers/README.md describes ("A worker image with the unmodified Python worker"):
// debootstrap minbase + python3, apt-get install the packages setup-python-peers.sh installs, the
// unpacked client and pyshims on PYTHONPATH, the handler, trimmed, then `docker import`.
// Needs root (debootstrap, chroot), debootstrap (.ci/host-deps.sh) and a reachable Debian mirror.
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importRootfs, InputHash, run, stepTimer } from './worker-image-build.ts';

export const PYTHON_WORKER_REPO = 'gpufleet-test/python-worker';
const HERE = dirname(fileURLToPath(import.meta.url));
/** ../shared/peers beside the checkout (runpod-python snapshot, pyshims, setup-python-peers.sh) */
export const PEERS_DIR = join(HERE, '..', '..', '..', 'shared', 'peers');
const HANDLER = join(HERE, 'worker-handlers', 'python_test_handler.py');
const SUITE = 'bookworm';
const LAYOUT_VERSION = 'python-worker-1';
const APP = '/opt/gpufleet';
const CHROOT_ENV = ['/usr/bin/env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', 'DEBIAN_FRONTEND=noninteractive', 'LANG=C.UTF-8'];

export interface PythonWorkerInputs {
  ref: string;
  tarball: string;
  packages: string[];
  mirror: string;
}

/** The files and package list the image is made of; `ref` is tagged by their hash. */
export async function pythonWorkerInputs(): Promise<PythonWorkerInputs> {
  const tarballName = (await readdir(PEERS_DIR)).find((f) => /^runpod-python-.*\.tar\.gz$/.test(f));
  if (!tarballName) throw new Error(`no runpod-python-*.tar.gz in ${PEERS_DIR}`);
  const tarball = join(PEERS_DIR, tarballName);
  const packages = await peerPackages();
  const hash = new InputHash().text(LAYOUT_VERSION).text(SUITE).text(packages.join(' '));
  await hash.file(tarball);
  await hash.tree(join(PEERS_DIR, 'pyshims'));
  await hash.file(HANDLER);
  return { ref: `${PYTHON_WORKER_REPO}:${hash.digest()}`, tarball, packages, mirror: await debianMirror() };
}

/** The Debian packages setup-python-peers.sh installs (its PKGS="..."), so the list lives in one place. */
async function peerPackages(): Promise<string[]> {
  const script = await readFile(join(PEERS_DIR, 'setup-python-peers.sh'), 'utf8');
  const m = /^PKGS="([^"]*)"/m.exec(script);
  if (!m?.[1]) throw new Error('setup-python-peers.sh has no PKGS="..." list');
  return m[1].split(/\s+/).filter(Boolean);
}

/** GPUFLEET_DEBIAN_MIRROR, else the first Debian (non-security) mirror apt on this machine uses. */
export async function debianMirror(): Promise<string> {
  if (process.env.GPUFLEET_DEBIAN_MIRROR) return process.env.GPUFLEET_DEBIAN_MIRROR;
  const files = ['/etc/apt/sources.list'];
  if (existsSync('/etc/apt/sources.list.d')) {
    for (const f of (await readdir('/etc/apt/sources.list.d')).sort()) if (/\.(list|sources)$/.test(f)) files.push(`/etc/apt/sources.list.d/${f}`);
  }
  for (const f of files) {
    const text = existsSync(f) ? await readFile(f, 'utf8') : '';
    const oneLine = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/gm;
    for (const m of text.matchAll(oneLine)) if (m[2] === SUITE && m[1]) return m[1];
    for (const block of text.split(/\n\s*\n/)) {
      const field = (k: string): string => new RegExp(`^${k}:\\s*(.*)$`, 'mi').exec(block)?.[1]?.trim() ?? '';
      if (/\bdeb\b/.test(field('Types')) && field('Suites').split(/\s+/).includes(SUITE)) {
        const uri = field('URIs').split(/\s+/)[0];
        if (uri) return uri;
      }
    }
  }
  return 'http://deb.debian.org/debian';
}

export async function buildPythonWorkerImage(inputs: PythonWorkerInputs): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('building the Python worker image needs root (debootstrap, chroot)');
  const root = join(await mkdtemp('/var/tmp/gpufleet-python-worker-'), 'rootfs');
  const lap = stepTimer('python-worker');
  try {
    await run('debootstrap', ['--variant=minbase', `--include=python3`, SUITE, root, inputs.mirror]).catch((e: unknown) => {
      throw new Error(`debootstrap failed (is it installed? .ci/host-deps.sh installs it): ${(e as Error).message}`, { cause: e });
    });
    lap('debootstrap');
    // debootstrap cannot resolve the virtual packages python3-bcrypt needs; apt inside the tree can
    await copyFile('/etc/resolv.conf', join(root, 'etc', 'resolv.conf'));
    await run('chroot', [root, ...CHROOT_ENV, 'apt-get', 'update', '-qq']);
    await run('chroot', [root, ...CHROOT_ENV, 'apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...inputs.packages]);
    await run('chroot', [root, ...CHROOT_ENV, 'apt-get', 'clean']);
    lap('apt-get install');
    await mkdir(join(root, APP.slice(1)), { recursive: true });
    await run('tar', ['-xzf', inputs.tarball, '-C', join(root, APP.slice(1))]);
    await cp(join(PEERS_DIR, 'pyshims'), join(root, APP.slice(1), 'pyshims'), { recursive: true });
    await copyFile(HANDLER, join(root, APP.slice(1), 'handler.py'));
    await run('chroot', [root, ...CHROOT_ENV, `PYTHONPATH=${APP}/runpod-python:${APP}/pyshims`, 'python3', '-c', 'import runpod, runpod.serverless']);
    await trim(root);
    lap('client, handler, trim');
    await importRootfs(root, inputs.ref, [
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      `ENV PYTHONPATH=${APP}/runpod-python:${APP}/pyshims`,
      'ENV PYTHONUNBUFFERED=1',
      'ENV LANG=C.UTF-8',
      // no internet on an offline fleet: the network fitness check would mark the worker unhealthy
      'ENV RUNPOD_SKIP_AUTO_SYSTEM_CHECKS=true',
      // test hosts fake nvidia-smi; the GPU check would then run a CUDA test binary
      'ENV RUNPOD_SKIP_GPU_CHECK=true',
      `WORKDIR ${APP}`,
      `CMD ["python3", "${APP}/handler.py"]`,
    ]);
    lap('docker import');
  } finally {
    await removeTree(dirname(root));
  }
}

/** with the vfs storage driver every container copies the whole image: keep it small */
export async function trim(root: string): Promise<void> {
  for (const d of ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'var/lib/apt/lists', 'var/cache/apt', 'var/log']) {
    const dir = join(root, d);
    if (!existsSync(dir)) continue;
    for (const e of await readdir(dir)) await rm(join(dir, e), { recursive: true, force: true });
  }
  await rm(join(root, 'var/cache/debconf/templates.dat-old'), { force: true });
  await rm(join(root, 'var/cache/debconf/config.dat-old'), { force: true });
  await writeFile(join(root, 'etc', 'resolv.conf'), ''); // the engine mounts its own
}

/** rm -rf, but never through a mount left inside the tree (debootstrap mounts /proc while it runs) */
export async function removeTree(dir: string): Promise<void> {
  const mounts = (await readFile('/proc/mounts', 'utf8')).split('\n').map((l) => l.split(' ')[1] ?? '');
  const inside = mounts.filter((m) => m.startsWith(`${dir}/`)).sort().reverse();
  for (const m of inside) await run('umount', ['-l', m]).catch(() => undefined);
  const still = (await readFile('/proc/mounts', 'utf8')).split('\n').some((l) => (l.split(' ')[1] ?? '').startsWith(`${dir}/`));
  if (still) throw new Error(`${dir} still has mounts inside; not removing it`);
  await rm(dir, { recursive: true, force: true });
}
