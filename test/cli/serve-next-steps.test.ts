// `gpufleet serve` (what `npm start` runs), its output not a terminal: after listening it prints the
// URL, the docs URL and the next step (export GPUFLEET_URL/GPUFLEET_API_KEY, hosts enroll). The API
// key is never in those lines: with GPUFLEET_BOOTSTRAP_KEY it is not printed at all, and a key made
// at first start is printed exactly once (the lines above), not again in the next step.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { ADMIN_KEY, freePort, spawnControlPlane, type SpawnedControlPlane } from '../harness/control-plane.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function serve(env: Record<string, string>): Promise<{ cp: SpawnedControlPlane; out: string }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-next-steps-'));
  const cp = await spawnControlPlane({ dataDir, port: await freePort(), env: { GPUFLEET_PROVISIONER: 'off', ...env } });
  cleanups.push(async () => {
    await cp.kill();
    await rm(dataDir, { recursive: true, force: true });
  });
  // /healthz may answer a moment before the lines are written
  const deadline = Date.now() + 10_000;
  while (!cp.output().includes('hosts enroll') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return { cp, out: cp.output() };
}

const steps = (url: string, key: string) =>
  `gpufleet is listening on ${url}; API docs: ${url}/v2/docs\n` +
  `Next, enrol a GPU host:\n` +
  `  export GPUFLEET_URL=${url} GPUFLEET_API_KEY=${key}\n` +
  `  npx gpufleet hosts enroll root@<host> --identity <ssh key file> --datacenter <dc>\n`;

test('with GPUFLEET_BOOTSTRAP_KEY: the URL, the docs and the next step, and no key', { timeout: 60_000 }, async () => {
  const { cp, out } = await serve({});
  expect(out).toContain(steps(cp.url, '<an admin key>'));
  expect(out).not.toContain(ADMIN_KEY);
  // the docs URL it prints answers
  expect((await fetch(`${cp.url}/v2/docs`)).status).toBe(200);
});

test('at first start without one: the key made is printed once, and the next step points at it', { timeout: 60_000 }, async () => {
  const { cp, out } = await serve({ GPUFLEET_BOOTSTRAP_KEY: '' });
  expect(out).toContain(steps(cp.url, '<the key above>'));
  const keys = out.match(/gf_[A-Za-z0-9_-]+/g) ?? [];
  expect(keys).toHaveLength(1);
  // it is the admin key it says it is
  expect((await fetch(`${cp.url}/v2/keys`, { headers: { authorization: `Bearer ${keys[0]}` } })).status).toBe(200);
  expect(out.indexOf(keys[0]!)).toBeLessThan(out.indexOf('Next, enrol'));
});
