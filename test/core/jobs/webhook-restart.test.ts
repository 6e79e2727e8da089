// A job's webhook survives a control-plane crash: the first attempt fails (the receiver answers 500),
// the control plane is SIGKILLed once that failed attempt is recorded in the queue's log, and after the
// restart the retry comes at its due time (10 s after the first attempt) and is the only 2xx delivery:
// no attempt is repeated, and once delivered, a further crash and restart sends nothing again.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { ADMIN_KEY, freePort, spawnControlPlane, type SpawnedControlPlane } from '../../harness/control-plane.ts';
import { waitFor } from '../../harness/wait-for.ts';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => undefined);
});

/** the queue's log records of type `t` (every generation, snapshots included) */
async function records(dataDir: string, t: string): Promise<Record<string, unknown>[]> {
  const dir = path.join(dataDir, 'jobs');
  const out: Record<string, unknown>[] = [];
  for (const n of (await readdir(dir)).sort()) {
    for (const line of (await readFile(path.join(dir, n), 'utf8')).split('\n')) {
      if (!line) continue;
      try {
        const rec = JSON.parse(line.slice(9)) as Record<string, unknown>;
        if (rec.t === t) out.push(rec);
      } catch {
        /* a torn last line */
      }
    }
  }
  return out;
}

test('a webhook whose first attempt failed is retried once after a SIGKILL and restart, and delivered exactly once', { timeout: 90_000 }, async () => {
  const hits: { at: number; status: number; body: { id?: string; status?: string } }[] = [];
  const answers = [500];
  const srv = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d: Buffer) => (data += d.toString()));
    req.on('end', () => {
      const status = answers.shift() ?? 200;
      hits.push({ at: Date.now(), status, body: JSON.parse(data) as { id?: string; status?: string } });
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise((r) => srv.close(r)));
  const hook = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-webhook-restart-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = { GPUFLEET_WEBHOOK_ALLOW_PRIVATE: 'true' };
  let cp: SpawnedControlPlane = await spawnControlPlane({ dataDir, port, env });
  cleanup.push(() => cp.kill('SIGKILL'));
  const api = async (p: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(cp.url + p, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, any> };
  };

  const tpl = await api('/v2/templates', { method: 'POST', json: { name: 'hook', image: 'busybox', serverless: true } });
  expect(tpl.status).toBe(201);
  const ep = await api('/v1/endpoints', { method: 'POST', json: { templateId: tpl.body.id, gpuTypeIds: ['ADA_24'], workersMin: 0, workersMax: 0 } });
  expect(ep.status).toBe(200);
  const run = await api(`/v2/${ep.body.id}/run`, { method: 'POST', json: { input: { n: 1 }, webhook: hook } });
  expect(run.status).toBe(200);
  // cancelling the queued job makes it final: its webhook is sent
  expect((await api(`/v2/${ep.body.id}/cancel/${run.body.id}`, { method: 'POST' })).body).toMatchObject({ status: 'CANCELLED' });

  await waitFor('the first attempt', async () => hits.length === 1, 10_000, 20);
  expect(hits[0]).toMatchObject({ status: 500, body: { id: run.body.id, status: 'CANCELLED' } });
  // the moment named: the failed attempt is durable, the retry 10 s away
  await waitFor('the failed attempt recorded', async () => (await records(dataDir, 'wh')).length === 1, 10_000, 20);
  await cp.kill('SIGKILL');
  expect((await records(dataDir, 'whx')).length).toBe(0);

  cp = await spawnControlPlane({ dataDir, port, env });
  await waitFor('the retry after the restart', async () => hits.length >= 2, 30_000, 50);
  expect(hits[1]).toMatchObject({ status: 200, body: { id: run.body.id, status: 'CANCELLED' } });
  // at its due time (10 s after the first attempt), not at once on start and not a new first attempt
  expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(9_500);
  await waitFor('the delivery cleared', async () => (await records(dataDir, 'whx')).length === 1, 10_000, 20);

  // delivered: a further crash and restart sends nothing again
  await cp.kill('SIGKILL');
  cp = await spawnControlPlane({ dataDir, port, env });
  await new Promise((r) => setTimeout(r, 2_000));
  expect(hits.map((h) => h.status)).toEqual([500, 200]);
  expect(hits.filter((h) => h.status === 200)).toHaveLength(1);
});
