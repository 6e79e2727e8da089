// What the CLI prints, as people and scripts see it: `pods get` fits a 100-column terminal (the whole
// record with --json); no colour escape codes when piped or with NO_COLOR, colour only on a terminal
// that has it; the spinner only on a terminal's stderr, never in stdout. Terminals are real
// pseudo-terminals (util-linux `script`).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO_ROOT, type TestControlPlane } from '../harness/control-plane.ts';
import { H100, startPodsControlPlane, uniqueName } from '../api/pods-helpers.ts';
import { runCli } from './run-cli.ts';

const run = promisify(execFile);
const SGR = /\x1b\[[0-9;]*m/; // a colour (Select Graphic Rendition) escape
const ESC = /\x1b/;

let cp: TestControlPlane;
let env: { url: string; key: string };
let podId = '';
let dir = '';

beforeAll(async () => {
  cp = await startPodsControlPlane();
  env = { url: cp.url, key: (await cp.newAccount('read_write')).key };
  const res = await cp.api('/v2/pods', {
    method: 'POST',
    key: env.key,
    json: { name: uniqueName('out'), image: 'busybox:1.36', gpu: { id: H100, count: 2 }, env: { SECRET_TOKEN: 'do-not-show-me', MODE: 'train' }, ports: ['8888/http', '22/tcp'], args: 'python train.py --epochs 100 --batch-size 512 --learning-rate 0.0003 --data /workspace/datasets/imagenet' },
  });
  expect(res.status).toBe(201);
  podId = ((await res.json()) as { id: string }).id;
  dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cli-out-'));
});
afterAll(async () => {
  await cp?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * runs the CLI in a pseudo-terminal (script); `shellTail` redirects, e.g. `2>file`; answers what the terminal showed.
 * CI machines set `CI` (and some TEAMCITY_VERSION), for which Node's hasColors() answers "no colours" unless a known
 * CI provider is named: the terminal here is a plain xterm, so those are left out.
 */
async function onTerminal(args: string[], extraEnv: Record<string, string | undefined>, shellTail = ''): Promise<string> {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const envVars = Object.fromEntries(
    Object.entries({ ...process.env, GPUFLEET_URL: env.url, GPUFLEET_API_KEY: env.key, TERM: 'xterm-256color', COLUMNS: '100', NO_COLOR: undefined, FORCE_COLOR: undefined, CI: undefined, TEAMCITY_VERSION: undefined, ...extraEnv }).filter(([, v]) => v !== undefined),
  ) as NodeJS.ProcessEnv;
  const { stdout } = await run('script', ['-qec', `stty cols 100 rows 40; '${process.execPath}' '${path.join(REPO_ROOT, 'bin/gpufleet.js')}' ${quoted} ${shellTail}`, '/dev/null'], {
    cwd: REPO_ROOT,
    env: envVars,
    timeout: 30_000,
  });
  return stdout;
}

describe('pods get', () => {
  test('fits 100 columns (no line longer), shows what matters, env names without their values; --json has the whole record', async () => {
    const r = await runCli(['pods', 'get', podId], env, 30_000, { env: { COLUMNS: undefined } });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => [...l].length > 100)).toEqual([]);
    for (const s of [podId, 'status', '2 × NVIDIA H100 80GB HBM3', '8888/http, 22/tcp', 'SECRET_TOKEN, MODE', 'conditions', 'events']) expect(r.stdout).toContain(s);
    expect(r.stdout).not.toContain('do-not-show-me');
    // a narrower terminal: COLUMNS is the width when stdout is not one
    const narrow = await runCli(['pods', 'get', podId], env, 30_000, { env: { COLUMNS: '70' } });
    expect(narrow.stdout.trimEnd().split('\n').filter((l) => [...l].length > 70)).toEqual([]);
    const full = await runCli(['pods', 'get', podId, '--json'], env);
    const pod = JSON.parse(full.stdout) as { env: Record<string, string> };
    expect(pod.env.SECRET_TOKEN).toBe('do-not-show-me');
    expect(pod).toEqual((await (await cp.api(`/v2/pods/${podId}`, { key: env.key })).json()) as unknown);
  }, 60_000);

  test('on a 100-column terminal too', async () => {
    const shown = await onTerminal(['pods', 'get', podId], { NO_COLOR: '1' }, `2>'${dir}/err'`);
    const lines = shown.replace(/\r/g, '').trimEnd().split('\n');
    expect(lines.filter((l) => [...l].length > 100)).toEqual([]);
    expect(shown).toContain(podId);
  }, 60_000);
});

describe('colour and progress', () => {
  test('piped (no NO_COLOR set): tables and records have no escape codes, stderr is empty', async () => {
    for (const args of [['pods', 'list'], ['pods', 'get', podId], ['gpus', 'list'], ['templates', 'list']]) {
      const r = await runCli(args, env, 30_000, { env: { NO_COLOR: undefined, FORCE_COLOR: undefined, TERM: 'xterm-256color' } });
      expect({ args, code: r.code, esc: ESC.test(r.stdout), stderr: r.stderr }).toEqual({ args, code: 0, esc: false, stderr: '' });
    }
  }, 60_000);

  test('on a terminal: colour without NO_COLOR, none with NO_COLOR=1', async () => {
    const coloured = await onTerminal(['pods', 'list'], {}, `2>'${dir}/err1'`);
    expect(coloured).toContain(podId);
    expect(coloured).toMatch(SGR);
    const plain = await onTerminal(['pods', 'list'], { NO_COLOR: '1' }, `2>'${dir}/err2'`);
    expect(plain).toContain(podId);
    expect(plain).not.toMatch(SGR);
  }, 60_000);

  test('the spinner goes to a terminal stderr only: stdout redirected to a file holds the table alone', async () => {
    const shown = await onTerminal(['pods', 'list'], { NO_COLOR: '1' }, `>'${dir}/out'`);
    const table = await readFile(path.join(dir, 'out'), 'utf8');
    expect(table).toContain(podId);
    expect(table).not.toMatch(ESC);
    // what the terminal showed is stderr's: the spinner's text, no table
    expect(shown).toContain('listing pods');
    expect(shown).not.toContain(podId);
  }, 60_000);
});
