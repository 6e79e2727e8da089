// Webhooks: the final job is POSTed to the job's `webhook`, with 2 retries 10 s apart; private,
// loopback and link-local addresses are refused at submission (422, nothing queued) and when sending
// (a name may resolve to one), unless GPUFLEET_WEBHOOK_ALLOW_PRIVATE=true.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { configFromEnv, WebhookSender, type WebhookDelivery } from '../../../core/index.ts';
import { embeddedIpv4, isPrivateAddress } from '../../../model/index.ts';
import { eventually, startJobWorld, type JobWorld } from './in-process-workers.ts';

/** an HTTP server on loopback recording each POST; `answers` are the statuses it gives, in order (then 200) */
async function receiver(answers: number[] = []): Promise<{ url: string; hits: { at: number; body: any }[]; close(): Promise<void> }> {
  const hits: { at: number; body: any }[] = [];
  const srv = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d: Buffer) => (data += d.toString()));
    req.on('end', () => {
      hits.push({ at: Date.now(), body: data ? JSON.parse(data) : undefined });
      res.statusCode = answers.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, hits, close: () => new Promise((r) => srv.close(() => r())) };
}

test('private, loopback, link-local and reserved addresses are private; public ones are not', () => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a01:203', 'not-an-ip'])
    expect(isPrivateAddress(a), a).toBe(true);
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '172.32.0.1']) expect(isPrivateAddress(a), a).toBe(false);
});

// issue 18, item 9: IPv6 forms that carry an IPv4 address are judged by the address they carry
test('IPv4-translated, local-use NAT64, 6to4 and Teredo addresses are judged by the IPv4 address they carry', () => {
  const carried: [string, string][] = [
    ['::ffff:0:7f00:1', '127.0.0.1'], // IPv4-translated (::ffff:0:0:0/96)
    ['::ffff:0:a9fe:a9fe', '169.254.169.254'],
    ['64:ff9b:1::7f00:1', '127.0.0.1'], // local-use NAT64 (64:ff9b:1::/48), /96 form
    ['2002:7f00:1::1', '127.0.0.1'], // 6to4 (2002::/16)
    ['2002:a00:5::', '10.0.0.5'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1'], // Teredo: the client's address, inverted
    ['::ffff:0:808:808', '8.8.8.8'],
    ['2002:808:808::1', '8.8.8.8'],
  ];
  for (const [a, v4] of carried) expect(embeddedIpv4(a), a).toBe(v4);
  for (const a of ['::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe', '::ffff:0:c0a8:101', '64:ff9b:1::7f00:1', '64:ff9b:1::a00:1', '64:ff9b:1:ab::1', '2002:7f00:1::1', '2002:a9fe:a9fe::', '2002:c0a8:101::1', '2001:0:4136:e378:8000:63bf:80ff:fffe'])
    expect(isPrivateAddress(a), a).toBe(true);
  for (const a of ['::ffff:0:808:808', '64:ff9b:1::808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])
    expect(isPrivateAddress(a), a).toBe(false);
});

test('GPUFLEET_WEBHOOK_ALLOW_PRIVATE=true (and only "true") allows private webhooks', () => {
  expect(configFromEnv({ GPUFLEET_WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate).toBe(true);
  expect(configFromEnv({ GPUFLEET_WEBHOOK_ALLOW_PRIVATE: '1' }).webhookAllowPrivate).toBe(false);
  expect(configFromEnv({}).webhookAllowPrivate).toBe(false);
});

describe('at submission, by default', () => {
  let world: JobWorld;
  let ep: string;
  beforeAll(async () => {
    world = await startJobWorld();
    ep = await world.newEndpoint();
  });
  afterAll(async () => world?.close());

  test('a webhook at a private or loopback address, or not an http(s) URL, is 422 and nothing is queued', async () => {
    for (const webhook of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'https://api.localhost/hook',
      'http://10.0.0.5/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:9000/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:0:7f00:1]/',
      'http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data',
      'http://[2002:7f00:1::1]:8080/hook',
      'ftp://example.com/x',
      'not a url',
    ]) {
      const res = await world.cp.api(`/v2/${ep}/run`, { method: 'POST', key: world.user.key, json: { input: {}, webhook } });
      expect(res.status, webhook).toBe(422);
      expect(((await res.json()) as { errors: string[] }).errors[0], webhook).toMatch(/^\$\.webhook: /);
    }
    const h = (await (await world.cp.api(`/v2/${ep}/health`, { key: world.user.key })).json()) as { jobs: { inQueue: number } };
    expect(h.jobs.inQueue).toBe(0);
  });

  test('a public address is accepted', async () => {
    const res = await world.cp.api(`/v2/${ep}/run`, { method: 'POST', key: world.user.key, json: { input: {}, webhook: 'http://93.184.216.34/hook' } });
    expect(res.status).toBe(200);
    await world.cp.api(`/v2/${ep}/purge-queue`, { method: 'POST', key: world.user.key });
  });
});

describe('delivery (GPUFLEET_WEBHOOK_ALLOW_PRIVATE=true, so a loopback receiver is allowed)', () => {
  let world: JobWorld;
  let ep: string;
  beforeAll(async () => {
    world = await startJobWorld({ config: { webhookAllowPrivate: true } });
    ep = await world.newEndpoint();
    await world.startWorker(ep);
  });
  afterAll(async () => world?.close());

  test('the final job is POSTed once: the same JSON as its status', async () => {
    const r = await receiver();
    try {
      const res = await world.cp.api(`/v2/${ep}/run`, { method: 'POST', key: world.user.key, json: { input: { output: { v: 1 } }, webhook: r.url } });
      const { id } = (await res.json()) as { id: string };
      await eventually(async () => r.hits.length > 0, 10_000, 'the webhook');
      const status = await (await world.cp.api(`/v2/${ep}/status/${id}`, { key: world.user.key })).json();
      expect(r.hits[0]!.body).toEqual(status);
      expect(r.hits[0]!.body).toMatchObject({ id, status: 'COMPLETED', output: { v: 1 } });
      await new Promise((x) => setTimeout(x, 300));
      expect(r.hits).toHaveLength(1);
    } finally {
      await r.close();
    }
  });

  test('a failed delivery is retried 10 s later (the default delay)', { timeout: 30_000 }, async () => {
    const r = await receiver([500]);
    try {
      await world.cp.api(`/v2/${ep}/run`, { method: 'POST', key: world.user.key, json: { input: { fail: 'nope' }, webhook: r.url } });
      await eventually(async () => r.hits.length >= 2, 20_000, 'the retry');
      const gap = r.hits[1]!.at - r.hits[0]!.at;
      expect(gap).toBeGreaterThanOrEqual(9_900);
      expect(gap).toBeLessThan(13_000);
      expect(r.hits[1]!.body).toMatchObject({ status: 'FAILED' });
    } finally {
      await r.close();
    }
  });
});

describe('WebhookSender', () => {
  test('gives up after 2 retries (3 attempts), retryDelayMs apart', async () => {
    const r = await receiver([500, 502, 503, 200]);
    const results: WebhookDelivery[] = [];
    const s = new WebhookSender({ allowPrivate: true, retryDelayMs: 150, onDelivery: (d) => results.push(d) });
    try {
      s.send(r.url, 'job-1', { id: 'job-1', status: 'COMPLETED' });
      await eventually(async () => results.length > 0, 5000, 'the delivery result');
      expect(results[0]).toMatchObject({ jobId: 'job-1', delivered: false, attempts: 3, error: 'HTTP 503' });
      expect(r.hits).toHaveLength(3);
      expect(r.hits[2]!.at - r.hits[1]!.at).toBeGreaterThanOrEqual(140);
    } finally {
      s.close();
      await r.close();
    }
  });

  test('when sending, a name that resolves to a private address is not called', async () => {
    const r = await receiver();
    const results: WebhookDelivery[] = [];
    const s = new WebhookSender({ allowPrivate: false, retryDelayMs: 10, onDelivery: (d) => results.push(d) });
    try {
      s.send(r.url.replace('127.0.0.1', 'localhost'), 'job-2', {});
      s.send(r.url, 'job-3', {});
      await eventually(async () => results.length === 2, 5000, 'both results');
      expect(results.every((d) => !d.delivered)).toBe(true);
      expect(results.find((d) => d.jobId === 'job-2')!.error).toMatch(/private address/);
      expect(r.hits).toHaveLength(0);
    } finally {
      s.close();
      await r.close();
    }
  });
});
