// The built CLI, as `npm ci` leaves it, in a package folder of its own (test/harness/built-package.ts:
// the sources, dist/ from bin/build.js, bin/); its bin runs WITHOUT GPUFLEET_DEV (every other test
// sets it). A resolve hook records each ES module the process loads, so the test sees what ran:
// `--help` and a client command load dist/cli and dist/client but nothing of core, provider or tsx;
// `serve` starts from dist/ and answers; a dist/ older than its sources, or without its stamp, is
// refused with the one-line hint, unless it was built in another folder (an installed package)
// (docs/cli.md, "Built or from the sources").
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildPackage, type BuiltPackage } from '../harness/built-package.ts';
import { ADMIN_KEY, freePort, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';

let built: BuiltPackage;
let pkg: string;
let cp: TestControlPlane;

/** ES modules a process resolved (a hook on its own thread appends each URL to GPUFLEET_TRACE_FILE) */
const TRACE_HOOKS = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.GPUFLEET_TRACE_FILE, r.url + '\\n');
  return r;
}
`;
const TRACE_REGISTER = `import { register } from 'node:module';\nregister('./trace-hooks.mjs', import.meta.url);\n`;

beforeAll(async () => {
  built = await buildPackage();
  pkg = built.dir;
  await writeFile(path.join(pkg, 'trace-hooks.mjs'), TRACE_HOOKS);
  await writeFile(path.join(pkg, 'trace.mjs'), TRACE_REGISTER);
  cp = await startTestControlPlane();
}, 300_000);

afterAll(async () => {
  await cp?.close();
  await built?.remove();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** the module URLs it loaded, relative to the package folder where they are inside it */
  loaded: string[];
}

/** the environment of a user's shell: no GPUFLEET_DEV */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { GPUFLEET_DEV: _dev, ...env } = process.env;
  return { ...env, NO_COLOR: '1', ...extra };
}

let traces = 0;
async function distCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const trace = path.join(pkg, `trace-${++traces}.txt`);
  await writeFile(trace, '');
  const r = await new Promise<Omit<Run, 'loaded'>>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', path.join(pkg, 'trace.mjs'), path.join(pkg, 'bin/gpufleet.js'), ...args], {
      cwd: pkg,
      env: userEnv({ ...env, GPUFLEET_TRACE_FILE: trace }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { ...r, loaded: await loadedBy(trace) };
}

async function loadedBy(trace: string): Promise<string[]> {
  const urls = (await readFile(trace, 'utf8')).split('\n').filter(Boolean);
  return [...new Set(urls.map((u) => (u.startsWith('file://') ? path.relative(pkg, new URL(u).pathname) : u)))];
}

/** what must not load for a client command: the server side, the stack engine, the TypeScript loader */
const heavy = (loaded: string[]) => loaded.filter((u) => /^dist\/(core|store|fleet|api|provisioner|gateway|provider)\/|\.ts$|(^|\/)(tsx|@aws-sdk|cdktf|fastify)\//.test(u));

describe('the built CLI (no GPUFLEET_DEV)', () => {
  test('--help runs dist/cli and loads nothing of core, provider or tsx', async () => {
    const r = await distCli(['--help']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const c of ['serve', 'pods', 'plan', 'apply', 'hosts', 'store']) expect(r.stdout).toMatch(new RegExp(`^\\s+${c}\\b`, 'm'));
    // the trace works: the CLI's own modules are in it
    expect(r.loaded).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/client/index.js']));
    expect(heavy(r.loaded)).toEqual([]);
  });

  test("--version prints package.json's version from dist/, loading nothing of core, provider or tsx", async () => {
    const { version } = JSON.parse(await readFile(path.join(pkg, 'package.json'), 'utf8')) as { version: string };
    const r = await distCli(['--version']);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(r.loaded).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/cli/version.js']));
    expect(heavy(r.loaded)).toEqual([]);
  });

  test('a client command answers from a listening control plane, with only the client loaded', async () => {
    const r = await distCli(['accounts', 'list', '--json'], { GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: ADMIN_KEY });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const api = (await (await cp.api('/v2/accounts')).json()) as { accounts: { id: string }[] };
    expect((JSON.parse(r.stdout) as { id: string }[]).map((a) => a.id)).toEqual(api.accounts.map((a) => a.id));
    expect(api.accounts.length).toBeGreaterThan(0);
    expect(heavy(r.loaded)).toEqual([]);
  });

  test('serve starts from dist/, answers with its bootstrap key, and stops on SIGTERM', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-dist-serve-'));
    const trace = path.join(pkg, 'trace-serve.txt');
    await writeFile(trace, '');
    const child = spawn(process.execPath, ['--import', path.join(pkg, 'trace.mjs'), path.join(pkg, 'bin/gpufleet.js'), 'serve'], {
      cwd: pkg,
      env: userEnv({
        GPUFLEET_TRACE_FILE: trace,
        PORT: String(port),
        HOST: '127.0.0.1',
        GPUFLEET_DATA_DIR: dataDir,
        GPUFLEET_BOOTSTRAP_KEY: ADMIN_KEY,
        GPUFLEET_PROVISIONER: 'off',
        GPUFLEET_LOG_LEVEL: 'warn',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`serve exited early: ${out}`);
        const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
        if (ok) break;
        if (Date.now() > deadline) throw new Error(`serve did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const keys = await fetch(`${url}/v2/keys`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(keys.status).toBe(200);
      const loaded = await loadedBy(trace);
      expect(loaded).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/core/index.js', 'dist/api/index.js', 'dist/gateway/index.js']));
      expect(loaded.filter((u) => u.endsWith('.ts') || /(^|\/)tsx\//.test(u))).toEqual([]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('a dist/ older than a source is refused with the one-line hint; the same source dated before the build runs', async () => {
    const stamp = await stat(path.join(pkg, 'dist/build-info.json'));
    const source = path.join(pkg, 'cli/main.ts');
    const now = new Date();
    await utimes(source, now, now); // saved after the build began
    try {
      const stale = await distCli(['--help']);
      expect(stale.code).toBe(1);
      expect(stale.stdout).toBe('');
      expect(stale.stderr).toBe(
        'gpufleet: dist/ is older than the sources (cli/main.ts changed after the build): run `npm run build`, or set GPUFLEET_DEV=1 to run the sources through tsx\n',
      );
      expect(stale.loaded.filter((u) => u.startsWith('dist/'))).toEqual([]);
    } finally {
      const before = new Date(stamp.mtimeMs - 1000);
      await utimes(source, before, before);
    }
    expect((await distCli(['--help'])).code).toBe(0);
  });

  test('a dist/ built in another folder (a package npm installed, which dates files as it unpacks them) runs whatever its sources\' dates', async () => {
    const stampFile = path.join(pkg, 'dist/build-info.json');
    const [text, { mtime }] = await Promise.all([readFile(stampFile, 'utf8'), stat(stampFile)]);
    const source = path.join(pkg, 'cli/main.ts');
    const sourceDate = (await stat(source)).mtime;
    expect(JSON.parse(text)).toMatchObject({ dist: await realpath(path.join(pkg, 'dist')) });
    try {
      await writeFile(stampFile, JSON.stringify({ ...JSON.parse(text), dist: '/home/builder/gpufleet/dist' }));
      await utimes(stampFile, mtime, mtime);
      const now = new Date();
      await utimes(source, now, now);
      const r = await distCli(['--help']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    } finally {
      await writeFile(stampFile, text);
      await utimes(stampFile, mtime, mtime);
      await utimes(source, sourceDate, sourceDate);
    }
  });

  test('a dist/ without its build stamp (a failed build) is refused', async () => {
    const stamp = path.join(pkg, 'dist/build-info.json');
    await rename(stamp, `${stamp}.aside`);
    try {
      const r = await distCli(['pods', 'list']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^gpufleet: dist\/ has no build-info\.json .*: run `npm run build`, or set GPUFLEET_DEV=1 to run the sources through tsx\n$/);
    } finally {
      await rename(`${stamp}.aside`, stamp);
    }
  });
});
