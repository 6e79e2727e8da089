// Shared steps of the test worker image builders (worker-images.ts): run a command, hash inputs into
// a tag, serialise builders across vitest workers; `docker import` of a root filesystem is testing/'s.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDocker } from '../../testing/index.ts';

export { importRootfs } from '../../testing/index.ts';

/** Runs a command; resolves with stdout, rejects with the tail of stdout+stderr on failure. */
export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env, cwd: opts.cwd });
    let out = '';
    let all = '';
    child.stdout.on('data', (d: Buffer) => ((out += d.toString()), (all += d.toString())));
    child.stderr.on('data', (d: Buffer) => (all += d.toString()));
    child.on('error', (e) => reject(new Error(`${cmd}: ${e.message}`, { cause: e })));
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${all.trim().split('\n').slice(-15).join('\n')}`));
    });
  });
}

/** sha256 over strings and file contents, in order; the first 12 hex digits. */
export class InputHash {
  private readonly h = createHash('sha256');
  text(s: string): this {
    this.h.update(`${s.length}:${s}`);
    return this;
  }
  async file(path: string): Promise<this> {
    this.text(path);
    for await (const chunk of createReadStream(path)) this.h.update(chunk as Buffer);
    return this;
  }
  /** every file under `dir`, sorted by relative path (no __pycache__) */
  async tree(dir: string): Promise<this> {
    for (const rel of await listFiles(dir)) await this.file(join(dir, rel));
    return this;
  }
  digest(): string {
    return this.h.digest('hex').slice(0, 12);
  }
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name === '__pycache__') continue;
    const rel = join(prefix, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if (e.isFile()) out.push(rel);
  }
  return out;
}

export async function imageExists(ref: string): Promise<boolean> {
  try {
    await runDocker(['image', 'inspect', '--format', '{{.Id}}', ref]);
    return true;
  } catch {
    return false;
  }
}

/** Removes the other tags of `repo` (older builds); images still used by a container stay. */
export async function pruneOtherTags(repo: string, keep: string): Promise<void> {
  const { stdout } = await runDocker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}', repo]);
  for (const ref of stdout.split('\n').map((s) => s.trim())) {
    if (ref && ref !== keep && !ref.endsWith(':<none>')) await runDocker(['image', 'rm', ref]).catch(() => undefined);
  }
}

/**
 * Holds a lock directory (mkdir is atomic) while `fn` runs, so concurrent vitest workers build an
 * image once. A lock older than `staleMs` is taken over (its builder died).
 */
export async function withBuildLock<T>(name: string, staleMs: number, fn: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), `gpufleet-${name}.lock`);
  const deadline = Date.now() + staleMs + 60_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const st = await stat(lock).catch(() => null);
    if (st && Date.now() - st.mtimeMs > staleMs) await rm(lock, { recursive: true, force: true });
    if (Date.now() > deadline) throw new Error(`timed out waiting for image build lock ${lock}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** Size of an image as the engine reports it, in bytes. */
export async function imageSize(ref: string): Promise<number> {
  const { stdout } = await runDocker(['image', 'inspect', '--format', '{{.Size}}', ref]);
  return Number(stdout.trim());
}

/** `lap(name)` logs how long the step since the previous lap took (stderr; build times are reported). */
export function stepTimer(label: string): (step: string) => void {
  let last = Date.now();
  return (step) => {
    const now = Date.now();
    process.stderr.write(`[worker-images] ${label}: ${step} ${((now - last) / 1000).toFixed(1)} s\n`);
    last = now;
  };
}

/** Logs one line about a finished build on stderr (tests read nothing from it). */
export async function reportBuild(ref: string, startedAt: number): Promise<void> {
  const mb = ((await imageSize(ref)) / 1e6).toFixed(0);
  process.stderr.write(`[worker-images] built ${ref} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s (${mb} MB)\n`);
}
