// gpufleet built as `npm ci` builds it, in a folder of its own: a copy of the layers' sources (dated
// before the build, so the bin finds dist/ fresh), dist/ from `bin/build.js --out-dir`, a copy of bin/
// and package.json, and the repository's node_modules linked in. Not the repository's dist/: that one
// is rebuilt by `npm pack` (test/package) and refused whenever another engineer saves a source.
// Used by test/cli/dist-cli.test.ts and bench/cli-start.ts.
import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** the layers dist/ is built from (bin/dist-freshness.js checks the same ones) */
const SOURCE_DIRS = ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'provider', 'worker', 'cli', 'testing'];

export interface BuiltPackage {
  dir: string;
  /** its bin/gpufleet.js */
  bin: string;
  remove(): Promise<void>;
}

export async function buildPackage(): Promise<BuiltPackage> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-built-'));
  const filter = (src: string) => !src.endsWith('.test.ts');
  for (const d of SOURCE_DIRS) await cp(path.join(REPO_ROOT, d), path.join(dir, d), { recursive: true, filter });
  await promisify(execFile)(process.execPath, ['bin/build.js', '--out-dir', path.join(dir, 'dist')], { cwd: REPO_ROOT, maxBuffer: 16 << 20 }).catch(async (e: Error & { stdout?: string }) => {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`bin/build.js failed (tsc says why):\n${e.stdout ?? ''}`, { cause: e });
  });
  await mkdir(path.join(dir, 'bin'));
  for (const f of ['gpufleet.js', 'dist-freshness.js']) await copyFile(path.join(REPO_ROOT, 'bin', f), path.join(dir, 'bin', f));
  await copyFile(path.join(REPO_ROOT, 'package.json'), path.join(dir, 'package.json'));
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return { dir, bin: path.join(dir, 'bin/gpufleet.js'), remove: () => rm(dir, { recursive: true, force: true }) };
}
