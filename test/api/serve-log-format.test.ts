// `gpufleet serve` logs (issue 13): pino-pretty lines when stdout is a terminal, JSON lines otherwise,
// and in both an API key sent in the URL is censored (api/logging.ts still applies). The terminal is
// a real pseudo-terminal (util-linux `script`), so the check is the one `process.stdout.isTTY` makes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { ADMIN_KEY, freePort, REPO_ROOT } from '../harness/control-plane.ts';

const hasScript = spawnSync('script', ['--version']).status === 0;
const SECRET = 'gf_secret_in_the_query_0123456789abcdef';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Starts serve (in a pseudo-terminal when `tty`), sends one request with a key in the URL, returns the output. */
async function serveOutput(tty: boolean): Promise<string> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-logfmt-'));
  const port = await freePort();
  const serve = `${JSON.stringify(process.execPath)} bin/gpufleet.js serve`;
  const proc = tty
    ? spawn('script', ['-qefc', serve, '/dev/null'], { cwd: REPO_ROOT, detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: envFor(dataDir, port) })
    : spawn(process.execPath, ['bin/gpufleet.js', 'serve'], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: envFor(dataDir, port) });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  cleanups.push(async () => {
    if (proc.exitCode === null) process.kill(-proc.pid!, 'SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 30_000;
  while (!/listening/.test(out)) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`serve did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect((await fetch(`http://127.0.0.1:${port}/v2/pods?api_key=${SECRET}`)).status).toBe(401);
  // the response is logged after it is sent
  const until = Date.now() + 10_000;
  while (!/request completed/.test(out) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  return out;
}

function envFor(dataDir: string, port: number): NodeJS.ProcessEnv {
  return { ...process.env, PORT: String(port), HOST: '127.0.0.1', GPUFLEET_DATA_DIR: dataDir, GPUFLEET_BOOTSTRAP_KEY: ADMIN_KEY, GPUFLEET_LOG_LEVEL: 'info', GPUFLEET_PROVISIONER: 'off' };
}

describe('gpufleet serve logs', () => {
  test.skipIf(!hasScript)('are pino-pretty lines on a terminal, with the api_key in a logged URL censored', { timeout: 60_000 }, async () => {
    const out = await serveOutput(true);
    expect(out).toMatch(/INFO.*gpufleet control plane listening/);
    expect(out).toContain('incoming request');
    expect(out).not.toMatch(/^\{"level":/m);
    expect(out).not.toContain(SECRET);
    expect(out).toContain('api_key=[Redacted]');
  });

  test('are JSON lines when stdout is not a terminal, with the api_key in a logged URL censored', { timeout: 60_000 }, async () => {
    const out = await serveOutput(false);
    const lines = out.split('\n').filter((l) => l.startsWith('{'));
    const parsed = lines.map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } });
    expect(parsed.some((l) => l.msg === 'gpufleet control plane listening')).toBe(true);
    const logged = parsed.find((l) => l.req?.url?.startsWith('/v2/pods'));
    expect(logged?.req?.url).toBe('/v2/pods?api_key=[Redacted]');
    expect(out).not.toContain(SECRET);
  });
});
