// The job body's `s3Config` and `webhookV2` (runpod-compat.md 2.1), sent by the public platform's JS
// client (runpod-sdk, unmodified): s3Config reaches the worker with the job exactly as sent (runpod-
// python's rp_upload reads job["s3Config"]), while its secret shows in no API answer, webhook body,
// log line or file of the data directory; webhookV2 is a webhook. Bad ones are refused, nothing queued.
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_STORE } from '../../harness/test-store.ts';
import { eventually, startJobWorld, type JobWorld } from './in-process-workers.ts';
import { loadRunpodSdk, type RunpodEndpoint } from './runpod-sdk.ts';

const SECRET = 'S3-secret-9f8e7d6c5b4a-do-not-show';
const s3Config = { accessId: 'AKIA-test-id', accessSecret: SECRET, bucketName: 'results', endpointUrl: 'https://s3.example.com', objectPath: 'runs/' };

let world: JobWorld;
let endpointId: string;
let sdk: RunpodEndpoint;
let log = '';
const hooks: unknown[] = [];
let hookUrl = '';
let hookServer: http.Server;

beforeAll(async () => {
  hookServer = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d: Buffer) => (data += d.toString()));
    req.on('end', () => {
      hooks.push(JSON.parse(data));
      res.end();
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      log += chunk.toString();
      done();
    },
  });
  world = await startJobWorld({ logger: pino({ level: 'trace' }, sink), config: { webhookAllowPrivate: true, workerPollMs: 1500, logLevel: 'trace' } });
  endpointId = await world.newEndpoint();
  sdk = (await loadRunpodSdk())(world.user.key, { baseUrl: `${world.cp.url}/v2` }).endpoint(endpointId)!;
});
afterAll(async () => {
  await world?.close();
  await new Promise((r) => hookServer?.close(r));
});

/** every file under the data directory, as text (a temp file renamed away between the listing and its
 * read is skipped: the store writes whole files by rename while the test reads; its content is in the
 * renamed file, which the listing holds too or the next read will) */
async function dataDirText(dir: string): Promise<string> {
  let out = '';
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    try {
      out += (await readFile(path.join(e.parentPath, e.name))).toString('latin1');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out;
}

describe('s3Config', () => {
  test('runpod-sdk run with s3Config and webhookV2: the worker gets s3Config as sent; status, runsync, webhook, health, logs and the data directory never show the secret', async () => {
    const w = await world.directory.issue(endpointId);
    const queued = await sdk.run({ input: { upload: 'me' }, s3Config, webhookV2: hookUrl });
    expect(queued).toMatchObject({ status: 'IN_QUEUE' });
    const take = await fetch(`${world.cp.url}/v2/${endpointId}/job-take/${w.workerId}?job_in_progress=0`, { headers: { authorization: w.token } });
    expect(take.status).toBe(200);
    expect(await take.json()).toEqual({ id: queued.id, input: { upload: 'me' }, s3Config });

    const status = await sdk.status(queued.id);
    expect(status).toMatchObject({ id: queued.id, status: 'IN_PROGRESS' });
    await fetch(`${world.cp.url}/v2/${endpointId}/job-done/${w.workerId}/${queued.id}?isStream=false`, {
      method: 'POST',
      headers: { authorization: w.token, 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify({ output: { url: 'https://s3.example.com/results/runs/x.png' } }),
    });
    // webhookV2 is the job's webhook: it gets the final job
    await eventually(async () => hooks.length > 0, 10_000, 'the webhookV2 delivery');
    expect(hooks[0]).toMatchObject({ id: queued.id, status: 'COMPLETED', output: { url: 'https://s3.example.com/results/runs/x.png' } });

    // runsync with s3Config: its answer (the final job) holds no s3Config either
    const sync = world.cp.api(`/v2/${endpointId}/runsync?wait=10000`, { method: 'POST', key: world.user.key, json: { input: { n: 2 }, s3Config } });
    const t2 = await fetch(`${world.cp.url}/v2/${endpointId}/job-take/${w.workerId}?job_in_progress=0`, { headers: { authorization: w.token } });
    const second = (await t2.json()) as { id: string; s3Config: unknown };
    expect(second.s3Config).toEqual(s3Config);
    await fetch(`${world.cp.url}/v2/${endpointId}/job-done/${w.workerId}/${second.id}?isStream=false`, { method: 'POST', headers: { authorization: w.token }, body: '{"output":2}' });
    const syncAnswer = await (await sync).text();
    expect(JSON.parse(syncAnswer)).toMatchObject({ id: second.id, status: 'COMPLETED', output: 2 });

    const answers = [
      JSON.stringify(await sdk.status(queued.id)),
      JSON.stringify(await sdk.health()),
      syncAnswer,
      JSON.stringify(hooks),
      await (await world.cp.api(`/v2/${endpointId}/status/${second.id}`, { key: world.user.key })).text(),
    ];
    for (const a of answers) {
      expect(a).not.toContain(SECRET);
      expect(a).not.toContain('s3Config');
    }
    expect(log.length).toBeGreaterThan(0);
    expect(log).not.toContain(SECRET);
    // the queue keeps the config with the secret sealed: in its log on the embedded store, in its
    // row on PostgreSQL (the data directory holds no job there)
    expect(await dataDirText(world.cp.dataDir)).not.toContain(SECRET);
    if (TEST_STORE === 'embedded') expect(await dataDirText(world.cp.dataDir)).toContain('AKIA-test-id');
    const kept = JSON.stringify((await world.cp.services.jobQueue.get(queued.id))?.s3Config);
    expect(kept).toContain('AKIA-test-id');
    expect(kept).not.toContain(SECRET);
  });

  test('a bad s3Config is 422 naming the field (never echoing the secret), and nothing is queued', async () => {
    const before = ((await sdk.health()) as { jobs: { inQueue: number } }).jobs.inQueue;
    for (const [bad, path] of [
      [{ ...s3Config, accessSecret: undefined }, '$.s3Config.accessSecret: is required'],
      [{ ...s3Config, endpointUrl: 'ftp://s3.example.com' }, '$.s3Config.endpointUrl'],
      [{ ...s3Config, region: 'x' }, '$.s3Config.region: unknown property'],
      [{ ...s3Config, accessSecret: `${SECRET}${'x'.repeat(1100)}` }, '$.s3Config.accessSecret'],
      ['s3://bucket', '$.s3Config'],
    ] as const) {
      const res = await world.cp.api(`/v2/${endpointId}/run`, { method: 'POST', key: world.user.key, json: { input: {}, s3Config: bad } });
      const text = await res.text();
      expect(res.status, text).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((JSON.parse(text) as { errors: string[] }).errors.join('\n')).toContain(path);
      expect(text).not.toContain(SECRET);
    }
    expect(((await sdk.health()) as { jobs: { inQueue: number } }).jobs.inQueue).toBe(before);
    expect(log).not.toContain(SECRET);
  });
});

describe('webhookV2', () => {
  test('webhook and webhookV2 naming different URLs: 400; the same URL is one webhook; nothing queued on refusal', async () => {
    const before = ((await sdk.health()) as { jobs: { inQueue: number } }).jobs.inQueue;
    const res = await world.cp.api(`/v2/${endpointId}/run`, { method: 'POST', key: world.user.key, json: { input: {}, webhook: hookUrl, webhookV2: `${hookUrl}/other` } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: string[] }).errors).toEqual(['$.webhookV2: must be absent or equal to $.webhook']);
    expect(((await sdk.health()) as { jobs: { inQueue: number } }).jobs.inQueue).toBe(before);
    const same = await world.cp.api(`/v2/${endpointId}/run`, { method: 'POST', key: world.user.key, json: { input: {}, webhook: hookUrl, webhookV2: hookUrl } });
    expect(same.status).toBe(200);
    await world.cp.api(`/v2/${endpointId}/purge-queue`, { method: 'POST', key: world.user.key });
  });
});

describe('webhookV2 where private addresses are refused', () => {
  let strict: JobWorld;
  beforeAll(async () => {
    strict = await startJobWorld();
  });
  afterAll(async () => strict?.close());

  test('a webhookV2 at a loopback address is 422 at $.webhookV2, nothing queued', async () => {
    const ep = await strict.newEndpoint();
    const res = await strict.cp.api(`/v2/${ep}/run`, { method: 'POST', key: strict.user.key, json: { input: {}, webhookV2: 'http://127.0.0.1:9/hook' } });
    expect(res.status).toBe(422);
    const p = (await res.json()) as { errors: string[]; detail: string };
    expect(p.errors[0]).toMatch(/^\$\.webhookV2: points at a private/);
    expect(p.detail).toMatch(/^The webhookV2 points at a private/);
    const h = (await (await strict.cp.api(`/v2/${ep}/health`, { key: strict.user.key })).json()) as { jobs: { inQueue: number } };
    expect(h.jobs.inQueue).toBe(0);
  });
});
