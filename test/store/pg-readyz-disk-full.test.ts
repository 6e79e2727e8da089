// GET /readyz while the PostgreSQL server's disk is full (issue 18, item 8): a cluster of the test's
// own whose database lives in a tablespace on a 24 MiB tmpfs, filled up for real. The server then
// refuses every write that needs a new page with 53100 ("could not extend file …: No space left on
// device"); before, the store passed that on as a plain error (500) and /readyz stayed 200. Now the
// write is 503 STORE_UNAVAILABLE with Retry-After, /readyz is 503 naming the refusal until a write
// succeeds again, and once space is back /readyz finds out by its own probe write (write-probe.ts),
// with no request writing. Needs `mount -t tmpfs` (root, small-fs.ts); runs whatever
// GPUFLEET_TEST_STORE says, as it brings its own PostgreSQL.
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { waitFor } from '../harness/wait-for.ts';
import { canMount, mountSmallFs, type SmallFs } from './small-fs.ts';

const exec = promisify(execFile);
const SECRET_KEY = Buffer.alloc(32, 7);

let fs: SmallFs | undefined;
let cluster: TestPostgres | undefined;
let cp: TestControlPlane | undefined;

interface Ready {
  status: number;
  body: { checks: Record<string, string> };
}

async function readyz(): Promise<Ready> {
  const res = await fetch(`${cp!.url}/readyz`);
  return { status: res.status, body: (await res.json()) as Ready['body'] };
}

beforeAll(async () => {
  if (!canMount) return;
  fs = await mountSmallFs(24);
  cluster = await startPostgres();
  // the tablespace's folder belongs to the server's user (postgres when the tests run as root)
  const location = path.join(fs.dir, 'tablespace');
  await mkdir(location);
  await exec('chown', ['postgres:postgres', fs.dir, location]);
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  try {
    await admin.query(`CREATE TABLESPACE gf_small LOCATION '${location}'`);
    await admin.query('CREATE DATABASE gf_full TABLESPACE gf_small');
  } finally {
    await admin.end();
  }
  const databaseUrl = cluster.url.replace(/\/postgres$/, '/gf_full');
  cp = await startTestControlPlane({ config: { databaseUrl, secretKey: SECRET_KEY } });
}, 120_000);

afterAll(async () => {
  await cp?.close().catch(() => undefined);
  await cluster?.stop();
  await fs?.unmount();
});

describe.skipIf(!canMount)('GET /readyz while the database server has no disk space', () => {
  test('a write refused with 53100 is 503 STORE_UNAVAILABLE and /readyz 503 naming it; space back: /readyz 200 by its own probe, and writes pass', async () => {
    expect((await readyz()).status).toBe(200);
    expect((await cp!.api('/v2/templates')).status).toBe(200);

    await fs!.fill();
    // the templates table has no page yet: this write must extend it, and the server refuses
    const res = await cp!.api('/v2/templates', { method: 'POST', json: { name: 'on-a-full-disk', image: 'busybox', args: 'x'.repeat(4000) } });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('1');
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('STORE_UNAVAILABLE');
    expect(problem.detail).toMatch(/cannot write.*SQLSTATE 53100/);

    const full = await readyz();
    expect(full.status).toBe(503);
    expect(full.body.checks.store).toMatch(/^the database cannot write: could not extend file .*No space left on device \(SQLSTATE 53100\)$/);
    // asked again later, the answer holds: the probe write is refused too while the disk is full
    await new Promise((r) => setTimeout(r, 300));
    const still = await readyz();
    expect(still.status).toBe(503);
    expect(still.body.checks.store).toMatch(/SQLSTATE 53100/);
    // and nothing of the refused write is there
    const listed = (await (await cp!.api('/v2/templates')).json()) as { templates: { name: string }[] };
    const names = listed.templates.map((t) => t.name);
    expect(names).not.toContain('on-a-full-disk');

    // space back: no request writes, yet the store still remembers the refusal until /readyz probes
    await fs!.free();
    expect(cp!.services.store.writeBlocker?.()).toMatch(/SQLSTATE 53100/);
    const back = await waitFor('/readyz 200 once space is back', async () => {
      const r = await readyz();
      return r.status === 200 ? r : null;
    }, 10_000, 100);
    expect(back.body.checks.store).toBe('ok');
    expect(cp!.services.store.writeBlocker?.()).toBeNull();

    const after = await cp!.api('/v2/templates', { method: 'POST', json: { name: 'space-back', image: 'busybox', args: 'x'.repeat(4000) } });
    expect(after.status).toBe(201);
    const now = (await (await cp!.api('/v2/templates')).json()) as { templates: { name: string }[] };
    expect(now.templates.map((t) => t.name)).toEqual(expect.arrayContaining(['space-back']));
    expect(now.templates.map((t) => t.name)).not.toContain('on-a-full-disk');
  }, 90_000);

  test('a job submitted while the disk is full is 503 STORE_UNAVAILABLE and /readyz 503 naming the job queue; space back: /readyz 200 by its own probe, and the job is taken', async () => {
    // an endpoint made while there is room; the queue's jobs table has no page yet
    const tpl = (await (await cp!.api('/v2/templates', { method: 'POST', json: { name: 'queue-tpl', image: 'busybox', serverless: true } })).json()) as { id: string };
    const epRes = await cp!.api('/v2/serverless', {
      method: 'POST',
      json: { name: 'full-disk-ep', type: 'QUEUE', templateId: tpl.id, gpu: { pools: ['ADA_24'], count: 1 }, workers: { min: 0, max: 1 }, scaling: { type: 'QUEUE_DELAY', queueDelay: 4 } },
    });
    expect(epRes.status, await epRes.clone().text()).toBe(201);
    const ep = (await epRes.json()) as { id: string };
    expect((await readyz()).status).toBe(200);

    await fs!.fill();
    const res = await cp!.api(`/v2/${ep.id}/run`, { method: 'POST', json: { input: { pad: 'y'.repeat(4000) } } });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE');
    const full = await readyz();
    expect(full.status).toBe(503);
    expect(full.body.checks.jobs).toMatch(/^the job queue's database cannot write: could not extend file .*No space left on device \(SQLSTATE 53100\)$/);
    await new Promise((r) => setTimeout(r, 300));
    expect((await readyz()).body.checks.jobs).toMatch(/SQLSTATE 53100/);
    // nothing queued
    const health = (await (await cp!.api(`/v2/${ep.id}/health`)).json()) as { jobs: { inQueue: number } };
    expect(health.jobs.inQueue).toBe(0);

    await fs!.free();
    expect(cp!.services.jobQueue.writeBlocker?.()).toMatch(/SQLSTATE 53100/);
    const back = await waitFor('/readyz 200 once space is back', async () => {
      const r = await readyz();
      return r.status === 200 ? r : null;
    }, 10_000, 100);
    expect(back.body.checks.jobs).toBe('ok');
    const again = await cp!.api(`/v2/${ep.id}/run`, { method: 'POST', json: { input: { pad: 'y'.repeat(4000) } } });
    expect(again.status).toBe(200);
    expect(((await (await cp!.api(`/v2/${ep.id}/health`)).json()) as { jobs: { inQueue: number } }).jobs.inQueue).toBe(1);
  }, 90_000);
});
