// The Node test worker image: this machine's own `node` binary with the shared libraries `ldd` lists
// for it (and the dynamic loader), busybox-static for a shell, and the worker SDK bundled by esbuild
// with the test handler (worker-handlers/node-test-handler.ts) as /app/worker.mjs.
import * as esbuild from 'esbuild';
import { chmod, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importRootfs, InputHash, run } from './worker-image-build.ts';

export const NODE_WORKER_REPO = 'gpufleet-test/node-worker';
const HANDLER = join(dirname(fileURLToPath(import.meta.url)), 'worker-handlers', 'node-test-handler.ts');
const BUSYBOX = '/bin/busybox';
/** bump when the layout below changes (the tag is a hash of this and every input) */
const LAYOUT_VERSION = 'node-worker-1';

export interface NodeWorkerInputs {
  ref: string;
  bundle: string;
  libs: string[];
}

/**
 * Bundles the handler and resolves the files the image is made of; `ref` is tagged by their hash.
 * Another entry point (a model worker, test/harness/model-images.ts) makes another image in `repo`.
 */
export async function nodeWorkerInputs(entry = HANDLER, repo = NODE_WORKER_REPO): Promise<NodeWorkerInputs> {
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    // CommonJS dependencies (ws) require Node's built-ins, which an ESM bundle has no `require` for
    banner: { js: "import { createRequire as __gpufleetRequire } from 'node:module'; const require = __gpufleetRequire(import.meta.url);" },
  });
  const bundle = out.outputFiles[0]?.text;
  if (!bundle) throw new Error(`esbuild produced no output for ${entry}`);
  const libs = await sharedLibraries(process.execPath);
  const hash = new InputHash().text(LAYOUT_VERSION).text(bundle);
  for (const f of [process.execPath, BUSYBOX, ...libs]) await hash.file(f);
  return { ref: `${repo}:${hash.digest()}`, bundle, libs };
}

/** Absolute paths of the libraries `ldd` resolves for `binary`, the loader included. */
export async function sharedLibraries(binary: string): Promise<string[]> {
  const text = await run('ldd', [binary]);
  const paths = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
    if (m?.[1]) paths.add(m[1]);
  }
  if (![...paths].some((p) => p.includes('ld-linux'))) throw new Error(`ldd ${binary} listed no dynamic loader:\n${text}`);
  return [...paths].sort();
}

export async function buildNodeWorkerImage(inputs: NodeWorkerInputs): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gpufleet-node-worker-'));
  try {
    await layBusyboxRoot(root, inputs.libs);
    await copyFile(process.execPath, join(root, 'usr', 'local', 'bin', 'node'));
    await chmod(join(root, 'usr', 'local', 'bin', 'node'), 0o755);
    await writeFile(join(root, 'app', 'worker.mjs'), inputs.bundle);
    await importRootfs(root, inputs.ref, [
      'ENV PATH=/usr/local/bin:/bin',
      'ENV NODE_ENV=production',
      'WORKDIR /app',
      'CMD ["node", "/app/worker.mjs"]',
    ]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * A root filesystem of busybox-static (a shell and the usual tools) and `libs` at the paths ldd
 * resolved them to, with root and nobody: the base of the Node images and the sshd image (sshd-image.ts).
 */
export async function layBusyboxRoot(root: string, libs: readonly string[]): Promise<void> {
  for (const d of ['bin', 'etc', 'root', 'proc', 'sys', 'dev', 'usr/local/bin', 'app']) await mkdir(join(root, d), { recursive: true });
  await mkdir(join(root, 'tmp'));
  await chmod(join(root, 'tmp'), 0o1777);
  await symlink('bin', join(root, 'sbin'));
  await symlink('../bin', join(root, 'usr', 'bin'));
  await symlink('../bin', join(root, 'usr', 'sbin'));
  await copyFile(BUSYBOX, join(root, 'bin', 'busybox'));
  for (const a of (await run(BUSYBOX, ['--list'])).split('\n').map((s) => s.trim())) {
    if (a && a !== 'busybox' && !a.includes('/')) await symlink('busybox', join(root, 'bin', a));
  }
  // each library at the path ldd resolved it to (copyFile follows the host's symlinks)
  for (const lib of libs) {
    await mkdir(join(root, dirname(lib)), { recursive: true });
    await copyFile(lib, join(root, lib));
  }
  await writeFile(join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
  await writeFile(join(root, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
}
