// Work that must happen once in all, with several control-plane replicas on one real PostgreSQL
// database and one S3 bucket (s3rver), in-process so a test can read their services (docs/replicas.md,
// "Loops that run once in all"). An expired media object is deleted by one replica's sweeper, though
// every replica sweeps; once that one stops, by one of the others. A job's webhook is delivered once,
// by the replica that made the job final, though every replica keeps asking the outbox for deliveries
// to take over; and a delivery left pending by a replica that stops is delivered by exactly one of
// the others.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { PostgresJobQueue } from '../../../core/jobs/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { TEST_SECRET_KEY } from '../../harness/test-store.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { makePng } from '../public-models/media-fixtures.ts';
import { startS3rver, type TestS3 } from '../public-models/s3rver.ts';

let server: TestPostgres;
let url: string;
let db: pg.Pool;
let s3: TestS3;
let receiver: http.Server;
let hookUrl = '';
/** the media clock of every replica (moved past a URL's expiry by the tests) */
let now = Date.now();
const cps: TestControlPlane[] = [];
/** each replica's calls to its media store's delete, by key */
const deletes: string[][] = [];

/** what the webhook receiver was sent, per job: the status it answered each POST with */
const posts = new Map<string, number[]>();
/** jobs whose first POST the receiver answers with 500 */
const failFirst = new Set<string>();

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  db = new pg.Pool({ connectionString: url, max: 2 });
  s3 = await startS3rver();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const id = (JSON.parse(body) as { id: string }).id;
      const seen = posts.get(id) ?? [];
      const status = failFirst.has(id) && seen.length === 0 ? 500 : 200;
      posts.set(id, [...seen, status]);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  // one after the other: the first migrates the empty database
  for (let i = 0; i < 4; i++) {
    const cp = await startTestControlPlane({
      mediaClock: () => now,
      config: { databaseUrl: url, secretKey: TEST_SECRET_KEY, mediaS3: s3.config, webhookAllowPrivate: true },
    });
    const mine: string[] = [];
    const store = cp.services.media.store;
    const del = store.delete.bind(store);
    store.delete = async (key) => {
      mine.push(key);
      await del(key);
    };
    deletes.push(mine);
    cps.push(cp);
  }
}, 120_000);

afterAll(async () => {
  for (const cp of cps) await cp.close().catch(() => undefined);
  await new Promise((r) => receiver?.close(r));
  await db?.end();
  await s3?.close();
  await server?.stop();
});

const closed = new Set<TestControlPlane>();
const live = () => cps.filter((cp) => !closed.has(cp));
async function stop(cp: TestControlPlane): Promise<void> {
  closed.add(cp);
  await cp.close();
}

/** the replicas' deletes of `key`, counted over all of them */
const deletesOf = (key: string) => deletes.flat().filter((k) => k === key).length;

test('an expired media object in the shared bucket is deleted by one replica, though all sweep at once; once that one stops, by one of the others', async () => {
  const png = makePng(4, 4);
  const first = await cps[1]!.services.media.save(png, 'image/png');
  expect(await s3.keys()).toEqual([`media/${first.key}`]);
  now += 8 * 86_400_000;
  // every replica sweeps at the same moment: one of them lists and deletes
  const swept = await Promise.all(live().map((cp) => cp.services.media.sweep()));
  expect(swept.reduce((a, b) => a + b, 0)).toBe(1);
  expect(deletesOf(first.key)).toBe(1);
  expect(await s3.keys()).toEqual([]);
  const leader = live()[swept.indexOf(1)]!;
  // again: the same one sweeps (its turn renewed), the others leave it
  const second = await cps[2]!.services.media.save(png, 'image/png');
  now += 8 * 86_400_000;
  const again = await Promise.all(live().map((cp) => cp.services.media.sweep()));
  expect(again).toEqual(live().map((cp) => (cp === leader ? 1 : 0)));
  expect(deletesOf(second.key)).toBe(1);

  // the sweeping replica stops (it gives its turn up): the next sweep, on whichever replicas ask, is one of theirs
  await stop(leader);
  const third = await live()[0]!.services.media.save(png, 'image/png');
  now += 8 * 86_400_000;
  const after = await Promise.all(live().map((cp) => cp.services.media.sweep()));
  expect(after.reduce((a, b) => a + b, 0)).toBe(1);
  expect(deletesOf(third.key)).toBe(1);
  expect(await s3.keys()).toEqual([]);
});

/** a job made final on `cp` (enqueued, taken and completed through its queue), with the receiver as its webhook */
async function finishOn(cp: TestControlPlane, fail = false): Promise<string> {
  const q = cp.services.jobQueue;
  const job = await q.enqueue({ endpointId: 'ep-hooks', accountId: 'acct-hooks', input: { n: 1 }, webhook: hookUrl, sync: false });
  if (fail) failFirst.add(job.id);
  const [taken] = await q.take('ep-hooks', 'w-hooks');
  expect(taken?.id).toBe(job.id);
  await q.complete(job.id, 'w-hooks', { output: 'done' });
  return job.id;
}

const queueOf = (cp: TestControlPlane) => cp.services.jobQueue as PostgresJobQueue;
const pendingRow = async (id: string) => (await db.query<{ attempts: number; owner: string }>('SELECT attempts, owner FROM gf_job_webhooks WHERE job_id = $1', [id])).rows[0];

test('a webhook is delivered once, by the replica that made the job final; the others, polling the outbox, leave it alone', async () => {
  expect(live().length).toBeGreaterThanOrEqual(3);
  const id = await finishOn(live()[1]!);
  await waitFor('the webhook delivered', async () => posts.get(id)?.length === 1, 10_000, 20);
  // every replica has asked the outbox for deliveries to take over a few times since
  await new Promise((r) => setTimeout(r, 3_000));
  expect(posts.get(id)).toEqual([200]);
  expect(await pendingRow(id)).toBeUndefined();
});

test('a delivery pending on a replica that stops is delivered by exactly one of the others', async () => {
  const c = live().at(-1)!;
  const survivors = live().filter((cp) => cp !== c);
  expect(survivors.length).toBeGreaterThanOrEqual(2);
  // the first attempt fails; the replica records it (the next one due in 10 s), then stops
  const id = await finishOn(c, true);
  await waitFor('the first attempt recorded', async () => (await pendingRow(id))?.attempts === 1, 10_000, 20);
  expect(posts.get(id)).toEqual([500]);
  expect((await pendingRow(id))?.owner).toBe(queueOf(c).replicaId);
  await stop(c);
  // every survivor asks for it; one of them takes it over and makes the second attempt when it is due
  const owner = await waitFor('the delivery taken over', async () => {
    const o = (await pendingRow(id))?.owner;
    return o !== queueOf(c).replicaId ? o : null;
  }, 5_000, 20);
  expect(survivors.map((cp) => queueOf(cp).replicaId)).toContain(owner);
  await waitFor('the second attempt', async () => (posts.get(id)?.length ?? 0) >= 2, 20_000, 50);
  await new Promise((r) => setTimeout(r, 3_000));
  expect(posts.get(id)).toEqual([500, 200]);
  expect(await pendingRow(id)).toBeUndefined();
}, 60_000);
