// `gpufleet --version` from the sources (GPUFLEET_DEV=1, as vitest.config.ts sets it; the built dist/
// is checked in dist-cli.test.ts), and `hosts enroll` with an --identity file that is not there:
// exit 2 (wrong usage), one line naming the file, no stack trace, no host enrolled.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ADMIN_KEY, REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { runCli } from './run-cli.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
});
afterAll(async () => cp?.close());

test('--version and -V print package.json\'s version from the sources', async () => {
  const { version } = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(version).toMatch(/^\d+\.\d+\.\d+/);
  for (const flag of ['--version', '-V']) {
    const r = await runCli([flag], { url: cp.url, key: ADMIN_KEY });
    expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  }
});

test('hosts enroll with a missing --identity file exits 2 with one line naming it, and enrolls nothing', async () => {
  const hosts = async () => {
    const res = await cp.api('/v2/hosts');
    expect(res.status).toBe(200);
    return res.json();
  };
  const hostsBefore = await hosts();
  const missing = path.join(REPO_ROOT, 'no-such-dir', 'id_ed25519');
  const r = await runCli(['hosts', 'enroll', 'root@127.0.0.1:22', '--identity', missing], { url: cp.url, key: ADMIN_KEY });
  expect(r).toEqual({ code: 2, stdout: '', stderr: `error: --identity ${missing}: no such file\n` });
  expect(await hosts()).toEqual(hostsBefore);
});
