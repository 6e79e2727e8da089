// A PostgreSQL database written by an older gpufleet (87b9f54: its job queue made gpufleet_* tables at
// start) upgraded by this version (docs/postgres.md, "Upgrading"). The fixture
// test/fixtures/upgrade/postgres-87b9f54.sql was made by that version through its API and job queue
// (test/fixtures/upgrade/make-postgres-fixture.ts says how) and is restored into a fresh database of
// Debian's PostgreSQL here.
// - The new control plane started on it migrates (migration 4) and answers every record through the
//   API: the account's key, the template, the pod, the endpoint, the jobs IN_QUEUE (two lanes),
//   IN_PROGRESS (its worker still holds it, its stream chunk is there, it completes), COMPLETED and
//   CANCELLED (its job-stop request reaches the worker), and the pending webhook delivery is made.
// - `gpufleet db migrate` SIGKILLed inside migration 4 (after the tables are renamed, before the
//   indexes are, inside its transaction) leaves the database as it was (schema 3, gpufleet_* tables
//   with their rows); the rerun completes and every row of every job table is there, unchanged.
// The fixture's times are moved forward by the time since it was made (its jobs' ttl, leases and
// retention count from when it was written, as if the upgrade happened right after the stop).
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { migrateDatabase, MIGRATIONS } from '../../store/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { waitFor } from '../harness/wait-for.ts';
import { manifest, newName, OLD_TABLES, one, restoredFixture, rowsOf } from './postgres-upgrade-fixture.ts';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

test('the fixture holds what 87b9f54 wrote: five jobs in four statuses, a chunk, a job-stop request, a pending webhook delivery', async () => {
  const url = await restoredFixture(server);
  const rows = await rowsOf(url, OLD_TABLES);
  expect(rows.gpufleet_jobs).toHaveLength(5);
  expect(Object.values(manifest.statuses).sort()).toEqual(['CANCELLED', 'COMPLETED', 'IN_PROGRESS', 'IN_QUEUE', 'IN_QUEUE']);
  expect(rows.gpufleet_job_chunks).toHaveLength(1);
  expect(rows.gpufleet_job_stops).toEqual([expect.objectContaining({ worker_id: manifest.worker, job_id: manifest.jobs.cancelled })]);
  expect(rows.gpufleet_job_webhooks).toEqual([expect.objectContaining({ job_id: manifest.jobs.hooked, attempts: 1 })]);
  expect(await one(url, 'SELECT max(version) AS v FROM gf_schema_migrations')).toEqual({ v: 3 });
});

test('the new control plane started on a database of 87b9f54 migrates it and answers every pod, key, endpoint, job and webhook delivery', async () => {
  const url = await restoredFixture(server);
  const hits: { path: string; body: any }[] = [];
  const receiver = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d: Buffer) => (data += d.toString()));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', body: data ? JSON.parse(data) : undefined });
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    receiver.once('error', (e) => reject(new Error(`the fixture's webhook port ${manifest.webhookPort} is taken: ${e.message}`)));
    receiver.listen(manifest.webhookPort, '127.0.0.1', resolve);
  });
  let cp: TestControlPlane | undefined;
  try {
    cp = await startTestControlPlane({ config: { databaseUrl: url, secretKey: Buffer.from(manifest.secretKey, 'base64'), webhookAllowPrivate: true } });
    const key = manifest.user.key;
    const get = async (p: string) => {
      const res = await cp!.api(p, { key });
      return { status: res.status, body: (await res.json()) as any };
    };
    // one migration system: migrations 4 and 5 applied at start, the job tables under gf_, the old ones gone
    expect(await one(url, 'SELECT max(version) AS v FROM gf_schema_migrations')).toEqual({ v: 5 });
    for (const t of OLD_TABLES) expect(await one(url, `SELECT to_regclass('${t}')::text AS t`)).toEqual({ t: null });
    expect(await one(url, 'SELECT version FROM gpufleet_job_schema')).toEqual({ version: 2 });

    // the store's records, through the API with the account's key (its hash survived)
    const pod = await get(`/v2/pods/${manifest.podId}`);
    expect(pod.status).toBe(200);
    expect(pod.body).toMatchObject({ id: manifest.podId, name: 'upgrade-pod' });
    expect((await get(`/v2/templates/${manifest.templateId}`)).body).toMatchObject({ id: manifest.templateId, name: 'upgrade-worker' });
    const ep = await get(`/v1/endpoints/${manifest.endpointId}`);
    expect(ep.status).toBe(200);
    expect(ep.body).toMatchObject({ id: manifest.endpointId, name: 'upgrade-endpoint' });

    // every job, as the job interface answers it
    const status = (id: string) => get(`/v2/${manifest.endpointId}/status/${id}`);
    const { jobs } = manifest;
    expect((await status(jobs.queued)).body).toMatchObject({ id: jobs.queued, status: 'IN_QUEUE' });
    expect((await status(jobs.queuedLow)).body).toMatchObject({ id: jobs.queuedLow, status: 'IN_QUEUE' });
    expect((await status(jobs.running)).body).toMatchObject({ id: jobs.running, status: 'IN_PROGRESS' });
    expect((await status(jobs.hooked)).body).toMatchObject({ id: jobs.hooked, status: 'COMPLETED', output: { answer: 42 } });
    expect((await status(jobs.cancelled)).body).toMatchObject({ id: jobs.cancelled, status: 'CANCELLED' });

    // the running job's worker still holds it: its chunk is there, it learns of the cancelled one, it completes
    const q = cp.services.jobQueue;
    expect(await q.heldBy(manifest.worker)).toEqual([jobs.running]);
    expect((await get(`/v2/${manifest.endpointId}/stream/${jobs.running}`)).body).toMatchObject({ status: 'IN_PROGRESS', stream: [{ output: { chunk: 1 } }] });
    expect(await q.stopRequests(manifest.worker, { waitMs: 0 })).toEqual([jobs.cancelled]);
    await q.complete(jobs.running, manifest.worker, { output: { done: true } });
    expect((await status(jobs.running)).body).toMatchObject({ status: 'COMPLETED', output: { done: true } });
    // the queued jobs are taken in their lanes' order: the normal one, then the lowPriority one
    expect((await q.take(manifest.endpointId, 'w-new', { max: 2, waitMs: 0 })).map((j) => j.id)).toEqual([jobs.queued, jobs.queuedLow]);

    // the delivery pending since 87b9f54 is made (its second attempt)
    await waitFor('the pending webhook delivery', async () => hits.length > 0);
    expect(hits[0]).toMatchObject({ path: '/hook', body: { id: jobs.hooked, status: 'COMPLETED', output: { answer: 42 } } });
  } finally {
    await cp?.close();
    await new Promise((r) => receiver.close(r));
  }
});

test('gpufleet db migrate SIGKILLed inside migration 4 leaves the database as it was; the rerun completes with every row', async () => {
  const url = await restoredFixture(server);
  const before = await rowsOf(url, OLD_TABLES);
  const m4 = MIGRATIONS.find((m) => m.version === 4)!;
  // the moment: the tables and the sequence renamed, the indexes not yet
  const statement = (m4.sql as readonly string[]).findIndex((s) => s.includes('gpufleet_job_seq')) + 1;
  expect(statement).toBeGreaterThan(5);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/migrate-paused-child.ts'), url, '4', String(statement)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.on('exit', r));
  await waitFor('the migration paused', async () => out.includes(`PAUSED 4 ${statement}`) || child.exitCode !== null);
  expect(out).toContain(`PAUSED 4 ${statement}`);
  // from outside, nothing has moved yet: the migration's transaction is open
  expect(await one(url, `SELECT to_regclass('gpufleet_jobs')::text AS t`)).toEqual({ t: 'gpufleet_jobs' });
  child.kill('SIGKILL');
  await exited;

  // the killed session's transaction is rolled back: schema 3, the old tables with their rows
  await waitFor('the killed session gone', async () => (await one<{ n: number }>(url, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'gpufleet db migrate'`))?.n === 0, 10_000);
  expect(await one(url, 'SELECT max(version) AS v FROM gf_schema_migrations')).toEqual({ v: 3 });
  expect(await one(url, `SELECT to_regclass('gf_jobs')::text AS t`)).toEqual({ t: null });
  expect(await rowsOf(url, OLD_TABLES)).toEqual(before);

  // the rerun migrates: every row of every job table, unchanged, under its new name
  expect(await migrateDatabase(url)).toEqual({ applied: [4, 5], version: 5 });
  const after = await rowsOf(url, OLD_TABLES.map(newName));
  for (const t of OLD_TABLES) expect(after[newName(t)], t).toEqual(before[t]);
  // and a second run has nothing to do
  expect(await migrateDatabase(url)).toEqual({ applied: [], version: 5 });
});
