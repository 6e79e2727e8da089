// Issue 20, §1: a data directory written by an earlier version (commit 87b9f54, fixtures made by
// test/fixtures/upgrade/make-embedded.ts with that version's own code) is opened by this one with
// every pod, key, template, endpoint, job (IN_QUEUE, IN_PROGRESS, COMPLETED) and pending webhook
// delivery intact, checked through the API. The on-disk formats did not change (one log module,
// store/log/, reads and writes the same files: docs/storage.md), so there is no migration: the files
// are read as they are and written on in place. Two directories: `stopped` (closed as the docs say:
// stop, then start the new version) and `killed` (the old process died: store journal lines and job
// log records not yet in a snapshot).
//
// The one thing the first start writes on an old directory is the store's: the journal lines it
// replayed go into a new snapshot (temp file, flushed, renamed, folder flushed), and only then are
// the replayed segments deleted. A SIGKILL at either moment (GPUFLEET_PAUSE_AT, store/base/pause-point.ts)
// leaves the old files in place, and the next start finishes the job with nothing lost.
import { spawn } from 'node:child_process';
import { cp as copyDir, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { freePort, REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { describeEmbeddedOnly } from '../harness/embedded-only.ts';
import { waitFor } from '../harness/wait-for.ts';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/upgrade/embedded-87b9f54');

interface Manifest {
  mode: string;
  madeAt: number;
  adminKey: string;
  user: { accountId: string; key: string; readKey: string };
  pods: { alpha: string; beta: string; gamma: string };
  templateId: string;
  endpointId: string;
  jobs: { inProgress: string; completed: string; webhook: string; inQueue: string[] };
  webhook: { port: number; attemptsMade: number };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** a copy of the fixture (the committed one is never written), and its manifest */
async function fixtureCopy(mode: string): Promise<{ dir: string; m: Manifest }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `gpufleet-upgrade-${mode}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await copyDir(path.join(FIXTURES, mode), dir, { recursive: true });
  // 87b9f54 leaves journal/ in place, empty after a clean stop (its segments folded into the snapshot); git keeps
  // no empty folder, so a clean clone's fixture lacks it: the copy puts it back as the old version left it
  await mkdir(path.join(dir, 'journal'), { recursive: true, mode: 0o700 });
  return { dir, m: JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest };
}

/** the webhook receiver at the fixture's fixed port (outside the ephemeral range: nothing else picks it) */
async function receiver(port: number): Promise<{ hits: any[] }> {
  const hits: any[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      hits.push(JSON.parse(body));
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(port, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((r) => srv.close(() => r())));
  return { hits };
}

/** the new version on the old directory; its job queue's clock runs on from when the fixture was written */
async function start(dir: string, m: Manifest): Promise<TestControlPlane> {
  const t0 = Date.now();
  const cp = await startTestControlPlane({
    dataDir: dir,
    config: { databaseUrl: undefined, webhookAllowPrivate: true },
    jobClock: () => m.madeAt + (Date.now() - t0),
  });
  cleanups.push(() => cp.close());
  return cp;
}

async function json(cp: TestControlPlane, p: string, key: string): Promise<any> {
  const res = await cp.api(p, { key });
  expect(res.status, `GET ${p}`).toBe(200);
  return res.json();
}

async function expectIntact(cp: TestControlPlane, m: Manifest): Promise<void> {
  // keys: the admin key, the user's read_write key and its read key, each with its scope
  expect((await cp.api('/v2/pods', { key: m.adminKey })).status).toBe(200);
  const alpha = await json(cp, `/v2/pods/${m.pods.alpha}`, m.user.key);
  expect(alpha).toMatchObject({ id: m.pods.alpha, name: 'fixture-alpha', env: { HF_TOKEN: 'hf_fixture_secret', MODE: 'train' }, tags: { team: 'ml' } });
  const beta = await json(cp, `/v2/pods/${m.pods.beta}`, m.user.readKey);
  expect(beta).toMatchObject({ id: m.pods.beta, name: 'fixture-beta', desiredStatus: 'EXITED' });
  expect(await json(cp, `/v2/pods/${m.pods.gamma}`, m.user.key)).toMatchObject({ name: 'fixture-gamma', env: { LAST: 'journal-only' } });
  const { pods } = (await json(cp, '/v2/pods', m.user.key)) as { pods: { id: string }[] };
  expect(pods.map((p) => p.id).sort()).toEqual(Object.values(m.pods).sort());
  expect((await cp.api('/v2/pods', { method: 'POST', key: m.user.readKey, json: { name: 'x', image: 'busybox:1.36' } })).status).toBe(403);
  expect(await json(cp, `/v2/templates/${m.templateId}`, m.user.key)).toMatchObject({ id: m.templateId, name: 'fixture-worker' });
  expect(await json(cp, `/v1/endpoints/${m.endpointId}`, m.user.key)).toMatchObject({ id: m.endpointId, templateId: m.templateId });
  // jobs, through the job interface
  const status = (id: string) => json(cp, `/v2/${m.endpointId}/status/${id}`, m.user.key);
  expect(await status(m.jobs.inProgress)).toMatchObject({ id: m.jobs.inProgress, status: 'IN_PROGRESS' });
  expect(await status(m.jobs.completed)).toMatchObject({ id: m.jobs.completed, status: 'COMPLETED', output: { answer: 42 } });
  expect(await status(m.jobs.webhook)).toMatchObject({ id: m.jobs.webhook, status: 'COMPLETED', output: { answer: 'webhook' } });
  // queued jobs of an endpoint no host can serve (its GPU pool is not in the fixture's fleet) are shown
  // THROTTLED, with the reason; they are stored IN_QUEUE, as the counts below say
  for (const id of m.jobs.inQueue) expect(await status(id)).toMatchObject({ id, status: 'THROTTLED', reason: expect.any(String) });
  expect(await json(cp, `/v2/${m.endpointId}/health`, m.user.key)).toMatchObject({ jobs: { inProgress: 1, inQueue: 2 } });
}

describeEmbeddedOnly('a data directory written by 87b9f54 opens with everything intact', () => {
  for (const mode of ['stopped', 'killed']) {
    test(`${mode}: pods, keys, template, endpoint, jobs IN_QUEUE and IN_PROGRESS through the API; the pending webhook is delivered once; it goes on writing and reopens`, async () => {
      const { dir, m } = await fixtureCopy(mode);
      const hook = await receiver(m.webhook.port);
      const before = (await readdir(dir, { recursive: true })).sort();
      let cp = await start(dir, m);
      await expectIntact(cp, m);
      // the delivery that was pending (one attempt made) is sent by the new version
      await waitFor('the pending webhook is delivered', async () => hook.hits.length > 0, 30_000, 50);
      expect(hook.hits).toHaveLength(1);
      expect(hook.hits[0]).toMatchObject({ id: m.jobs.webhook, status: 'COMPLETED' });
      await waitFor('the delivery is settled', async () => (await cp.services.jobQueue.pendingWebhooks!()).length === 0, 10_000, 50);
      // it writes on in the same files: a worker takes a queued job and completes it; a pod is renamed
      const [taken] = await cp.services.jobQueue.take(m.endpointId, 'worker-new', { max: 1 });
      expect(taken?.id).toBe(m.jobs.inQueue[0]);
      await cp.services.jobQueue.complete(taken!.id, 'worker-new', { output: { after: 'upgrade' } });
      const renamed = await cp.api(`/v2/pods/${m.pods.alpha}`, { method: 'PATCH', key: m.user.key, json: { name: 'fixture-alpha-2' } });
      expect(renamed.status).toBe(200);
      await cp.close();
      cleanups.pop();
      // no file of the old layout was replaced by another kind: the same folders, the same names' forms
      const after = (await readdir(dir, { recursive: true })).sort();
      const form = (n: string) => n.replace(/\d{12}/, 'N');
      expect([...new Set(after.map(form))].filter((n) => !before.map(form).includes(n))).toEqual([]);

      cp = await start(dir, m);
      expect(await json(cp, `/v2/${m.endpointId}/status/${taken!.id}`, m.user.key)).toMatchObject({ status: 'COMPLETED', output: { after: 'upgrade' } });
      expect(await json(cp, `/v2/pods/${m.pods.alpha}`, m.user.key)).toMatchObject({ name: 'fixture-alpha-2', env: { HF_TOKEN: 'hf_fixture_secret' } });
      expect(await json(cp, `/v2/${m.endpointId}/status/${m.jobs.inProgress}`, m.user.key)).toMatchObject({ status: 'IN_PROGRESS' });
      expect(await json(cp, `/v2/${m.endpointId}/status/${m.jobs.inQueue[1]!}`, m.user.key)).toMatchObject({ status: 'THROTTLED' });
      expect(await json(cp, `/v2/${m.endpointId}/health`, m.user.key)).toMatchObject({ jobs: { inProgress: 1, inQueue: 1 } });
      expect(await cp.services.jobQueue.pendingWebhooks!()).toEqual([]);
      expect(hook.hits).toHaveLength(1); // delivered once, not again after the restart
    }, 90_000);
  }
});

/** `gpufleet serve` on `dir`, stopped by GPUFLEET_PAUSE_AT at `point` and SIGKILLed there */
async function killAt(dir: string, point: string): Promise<void> {
  const proc = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), 'serve'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: String(await freePort()), HOST: '127.0.0.1', GPUFLEET_DATA_DIR: dir, GPUFLEET_PROVISIONER: 'off', GPUFLEET_DEV: '1', GPUFLEET_PAUSE_AT: point },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((r) => proc.on('exit', (_code, signal) => r(signal)));
  try {
    await waitFor(`the control plane pauses at ${point}`, async () => {
      if (proc.exitCode !== null) throw new Error(`it exited first: ${out}`);
      return out.includes(`gpufleet: paused at ${point}`);
    }, 60_000, 50);
  } finally {
    proc.kill('SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');
}

describeEmbeddedOnly('SIGKILL in the middle of the first start on a directory written by 87b9f54', () => {
  test('killed after the new snapshot is written but before it replaces the old one: the old snapshot and journal are intact, and the next start finishes', async () => {
    const { dir, m } = await fixtureCopy('killed');
    const oldSnapshot = await readFile(path.join(dir, 'gpufleet.json'), 'utf8');
    const segments = await readdir(path.join(dir, 'journal'));
    expect(segments.length).toBeGreaterThan(0); // the fixture holds journal lines not in its snapshot
    await killAt(dir, 'snapshot-temp-written');
    // the new snapshot was only a temp file: the old snapshot and every journal segment are as they were
    expect(await readFile(path.join(dir, 'gpufleet.json'), 'utf8')).toBe(oldSnapshot);
    expect(await readdir(path.join(dir, 'journal'))).toEqual(segments);
    expect((await readdir(dir)).some((n) => n.endsWith('.tmp'))).toBe(true);
    await receiver(m.webhook.port);
    const cp = await start(dir, m);
    await expectIntact(cp, m);
  }, 120_000);

  test('killed after the new snapshot is committed but before the replayed segments are deleted: the next start reads both and loses nothing', async () => {
    const { dir, m } = await fixtureCopy('killed');
    const segments = await readdir(path.join(dir, 'journal'));
    const before = await stat(path.join(dir, 'gpufleet.json'));
    await killAt(dir, 'replayed-journal-kept');
    // committed: a new snapshot (renamed into place), and the old segments still there beside it
    expect((await stat(path.join(dir, 'gpufleet.json'))).mtimeMs).toBeGreaterThan(before.mtimeMs);
    expect(await readdir(path.join(dir, 'journal'))).toEqual(segments);
    await receiver(m.webhook.port);
    const cp = await start(dir, m);
    await expectIntact(cp, m);
    await cp.close();
    cleanups.pop();
    // the start finished what the killed one began: the replayed segments are gone
    for (const s of segments) expect((await readdir(path.join(dir, 'journal'))).includes(s)).toBe(false);
  }, 120_000);
});
