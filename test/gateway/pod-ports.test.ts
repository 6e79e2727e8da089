// Pods' HTTP ports on the proxy domain end to end (issue 25; docs/connect.md): a real sshd test host,
// the real Docker engine, the control plane with its provisioner and the podPortProxy mount. The pod
// runs the port test server (worker-handlers/port-test-main.ts: /echo shows the headers it received,
// /sse streams, a WebSocket echo): a Jupyter stand-in. Its name under the proxy domain is a Host header
// against the control plane's own address, as a wildcard DNS name would point there.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, spawnControlPlane, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import type { ServerConfig } from '../../core/index.ts';
import { disposeHostWorld, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { ensurePortServerImage } from '../harness/worker-images.ts';
import { waitFor } from '../harness/wait-for.ts';
import { port80Relay, proxyResolverRule, type Port80Relay } from '../harness/port80-relay.ts';
import { CHROMIUM_FLAGS } from '../harness/console-browser.ts';
import { provisioner } from '../../provisioner/index.ts';
import { loadBalancerGateway, podPortProxy } from '../../gateway/index.ts';
import { podViewSchema } from '../../model/index.ts';
import { PORT_LINK_KEY_PURPOSE, PortTokens } from '../../core/index.ts';

type J = Record<string, any>;
const GPU = 'NVIDIA H100 80GB HBM3';
const DOMAIN = 'pods.gpufleet-proxy.test';
const DC = `dc-ports-${process.pid}`;
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGsTQvF4yY3v1oH8n3sJ6bqX7hHkW2bF3bY0b1yZ3b0n alice@laptop';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let pod: J;
let portHost = '';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json(): J;
}

/** a request to the control plane's address with this Host (what `curl --resolve` does) */
function proxied(hostName: string, path: string, opts: { headers?: Record<string, string>; method?: string; body?: string } = {}): Promise<Answer> {
  const u = new URL(cp.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', headers: { host: hostName, ...opts.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) as J });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  const image = await ensurePortServerImage();
  host = await startTestHost({ name: `ports-${process.pid}`, gpus: [0, 1].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  cp = await startTestControlPlane({
    background: [provisioner()],
    reconcileIntervalMs: 300,
    mounts: [podPortProxy(), loadBalancerGateway()],
    config: { proxyDomain: DOMAIN, proxyScheme: 'http' },
  });
  hostId = await enrolTestHost(cp, host, { dataCenterId: DC });
  alice = await cp.newAccount();
  bob = await cp.newAccount();
  const keys = await cp.api('/v2/account/ssh-keys', { method: 'PUT', key: alice.key, json: { keys: [KEY] } });
  expect(keys.status).toBe(200);
  const res = await cp.api('/v2/pods', { method: 'POST', key: alice.key, json: { name: 'nb', image, disk: 1, gpu: { id: GPU, count: 1 }, ports: ['8888/http', '9000/tcp'], env: { PORT: '8888' } } });
  pod = (await res.json()) as J;
  expect(res.status, JSON.stringify(pod)).toBe(201);
  pod = await waitFor('pod RUNNING', async () => {
    const p = (await (await cp.api(`/v2/pods/${pod.id}`, { key: alice.key })).json()) as J;
    return p.status === 'RUNNING' ? p : null;
  }, 90_000);
  portHost = `${pod.id}-8888.${DOMAIN}`;
  // the server in the container is up (the port answers through the proxy)
  let last = '';
  await waitFor('the port answers', async () => {
    const r = await proxied(portHost, '/echo', { headers: bearer(alice.key) });
    last = `${r.status} ${r.body}`;
    return r.status === 200;
  }, 30_000).catch((e: Error) => {
    throw new Error(`${e.message}: last answer ${last}`);
  });
}, 240_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe('a pod port by URL', () => {
  test("runtime.ports: the HTTP port has its URL on the proxy domain, the TCP port none; the view matches its schema", async () => {
    const ports = pod.runtime.ports as J[];
    expect(ports.find((p) => p.private === 8888)).toMatchObject({ type: 'http', url: `http://${pod.id}-8888.${DOMAIN}` });
    expect(ports.find((p) => p.private === 9000)).toMatchObject({ type: 'tcp', url: null });
    expect(pod.ssh).toEqual({ proxy: { host: pod.id, port: 22, username: 'root', command: `gpufleet pods ssh ${pod.id}` }, direct: null });
    const validate = new Ajv({ strict: false }).compile(podViewSchema);
    expect(validate(pod), JSON.stringify(validate.errors)).toBe(true);
  });

  test('with the key: method, path, query and body reach the pod; the key and every gpufleet cookie (the port\'s, the console session\'s) do not', async () => {
    const r = await proxied(portHost, '/echo/a?q=1', {
      method: 'POST',
      headers: { ...bearer(alice.key), 'x-api-key': alice.key, cookie: 'theirs=1; gpufleet-port=abc; __Host-gpufleet-port=def; gpufleet-session=ghi; __Host-gpufleet-session=jkl; other=2', 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(r.status, r.body).toBe(200);
    const seen = r.json();
    expect(seen).toMatchObject({ method: 'POST', url: '/echo/a?q=1', body: 'hello' });
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-api-key']).toBeUndefined();
    expect(seen.headers.cookie).toBe('theirs=1; other=2');
    expect(seen.headers.host).toBe(portHost);
    expect(JSON.stringify(seen.headers)).not.toContain(alice.key);    // nor may the pod set a gpufleet cookie; its own pass
    const set = await proxied(portHost, '/set-cookies', { headers: bearer(alice.key) });
    expect(set.headers['set-cookie']).toEqual(['mine=1; Path=/']);
  });

  test("another account's key, no key, an unpublished port and a name that is no pod's are refused with problem+json", async () => {
    const other = await proxied(portHost, '/echo', { headers: bearer(bob.key) });
    expect(other.status).toBe(404);
    expect(other.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(other.json().code).toBe('NOT_FOUND');
    const none = await proxied(portHost, '/echo');
    expect(none.status).toBe(401);
    expect(none.json().code).toBe('UNAUTHENTICATED');
    const tcp = await proxied(`${pod.id}-9000.${DOMAIN}`, '/echo', { headers: bearer(alice.key) });
    expect(tcp.status).toBe(404);
    for (const name of [`nothing.${DOMAIN}`, `${pod.id}-0.${DOMAIN}`, `${pod.id}-70000.${DOMAIN}`, `${pod.id}-8888.x.${DOMAIN}`, DOMAIN]) {
      const r = await proxied(name, '/v2/pods', { headers: bearer(alice.key) });
      expect(r.status, name).toBe(404);
      expect(r.body).not.toContain(pod.id + '"'); // the API is not served on the proxy domain
    }
    // and the port is not served on the control plane's own origin, in any path form
    const own = await cp.api(`/.pod-port/${pod.id}/8888/echo`, { key: alice.key });
    expect(own.status).toBe(404);
  });

  test('an operator may open any pod\'s port', async () => {
    expect((await proxied(portHost, '/echo', { headers: bearer(cp.adminKey) })).status).toBe(200);
  });

  test('a streaming answer arrives as the pod writes it', async () => {
    const u = new URL(cp.url);
    const times: number[] = [];
    const t0 = Date.now();
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest({ host: u.hostname, port: u.port, path: '/sse?n=3&gapMs=400', headers: { host: portHost, ...bearer(alice.key) } }, (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream');
        res.on('data', () => times.push(Date.now() - t0));
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual(700);
  });

  test('a WebSocket passes with the key (the key and gpufleet cookies do not reach the pod); a foreign Origin is refused', async () => {
    const url = `${cp.url.replace(/^http/, 'ws')}/kernel?x=1`;
    const ws = new WebSocket(url, { headers: { host: portHost, ...bearer(alice.key), cookie: 'gpufleet-port=zzz; mine=1' } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const first = new Promise<string>((resolve) => ws.once('message', (d) => resolve(String(d))));
    ws.send('hi');
    expect(JSON.parse(await first)).toEqual({ path: '/kernel?x=1', cookie: 'mine=1', authorization: null, got: 'hi' });
    const echo = new Promise<Buffer>((resolve) => ws.once('message', (d) => resolve(d as Buffer)));
    ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect([...(await echo)]).toEqual([1, 2, 3]);
    ws.close();

    const evil = new WebSocket(url, { headers: { host: portHost, ...bearer(alice.key), origin: 'http://evil.example' } });
    const status = await new Promise<number>((resolve) => {
      evil.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      evil.once('open', () => resolve(101));
      evil.once('error', () => resolve(-1));
    });
    expect(status).toBe(403);
  });
});

describe('a signed link', () => {
  test("an expired link, a cookie's token used as a link, and a link of a revoked key are refused; a port's traffic carries no API rate-limit headers", async () => {
    const tokens = new PortTokens(cp.services.secretBox.deriveKey(PORT_LINK_KEY_PURPOSE));
    const principal = (await cp.services.keys.authenticate(`Bearer ${alice.key}`))!;
    const claims = { podId: pod.id, port: 8888, accountId: alice.accountId, keyId: principal.keyId };
    const now = Math.floor(Date.now() / 1000);
    const expired = tokens.sign('link', { ...claims, expiresAt: now - 1 });
    const cookieKind = tokens.sign('cookie', { ...claims, expiresAt: now + 60 });
    const good = tokens.sign('link', { ...claims, expiresAt: now + 60 });
    for (const t of [expired, cookieKind]) expect((await proxied(portHost, `/echo?gpufleet_link=${t}`)).status).toBe(401);
    expect((await proxied(portHost, `/echo?gpufleet_link=${good}`)).status).toBe(303); // the same, signed right
    // a key revoked: its links and cookies end with it
    const second = await cp.services.keys.createKey({ accountId: alice.accountId, name: 'second', scope: 'read_write' });
    const link = new URL((((await (await cp.api(`/v2/pods/${pod.id}/ports/8888/link`, { method: 'POST', key: second.key, json: {} })).json()) as J).url) as string);
    const exchanged = await proxied(portHost, link.pathname + link.search);
    const cookie = exchanged.headers['set-cookie']![0]!.split(';')[0]!;
    expect((await proxied(portHost, '/echo', { headers: { cookie } })).status).toBe(200);
    await cp.services.keys.revoke(second.record.id, principal);
    expect((await proxied(portHost, '/echo', { headers: { cookie } })).status).toBe(401);
    // the API's answers carry RateLimit headers; a pod's, through its port, do not (not counted)
    expect((await cp.api('/v2/pods', { key: alice.key })).headers.get('ratelimit')).not.toBeNull();
    const through = await proxied(portHost, '/echo', { headers: bearer(alice.key) });
    expect(through.status).toBe(200);
    expect(through.headers.ratelimit).toBeUndefined();
  });

  const link = async (key: string, port = 8888, body: J = { path: '/echo/x?y=2' }) =>
    cp.api(`/v2/pods/${pod.id}/ports/${port}/link`, { method: 'POST', key, json: body });

  test('is exchanged on the port\'s host for a host-only cookie and a redirect without the token; the cookie opens the port and never reaches the pod', async () => {
    const res = await link(alice.key);
    const body = (await res.json()) as J;
    expect(res.status, JSON.stringify(body)).toBe(201);
    const url = new URL(body.url as string);
    expect(url.host).toBe(portHost);
    expect(url.pathname).toBe('/echo/x');
    const first = await proxied(url.host, url.pathname + url.search);
    expect(first.status, first.body).toBe(303);
    expect(first.headers.location).toBe('/echo/x?y=2');
    const setCookie = first.headers['set-cookie']?.[0] ?? '';
    expect(setCookie).toMatch(/^gpufleet-port=v1\.[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/); // no Domain: this host only (http: no Secure)
    const cookie = setCookie.split(';')[0]!;
    const then = await proxied(portHost, '/echo/x?y=2', { headers: { cookie: `${cookie}; theirs=1` } });
    expect(then.status, then.body).toBe(200);
    expect(then.json().headers.cookie).toBe('theirs=1');
    // the cookie is this port's: not another pod's, not another port's name
    const elsewhere = await proxied(`${pod.id}-9000.${DOMAIN}`, '/echo', { headers: { cookie } });
    expect(elsewhere.status).toBe(401);
    // from another site, the cookie opens nothing but a top-level navigation
    const fromOther = await proxied(portHost, '/echo', { method: 'POST', headers: { cookie, origin: 'http://other-8888.' + DOMAIN } });
    expect(fromOther.status).toBe(403);
  });

  test('a forged or altered link is refused; only the pod\'s account asks for one; a port it does not publish has none', async () => {
    const good = new URL(((await (await link(alice.key)).json()) as J).url as string);
    const token = good.searchParams.get('gpufleet_link')!;
    const [v, payload, mac] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as J;
    const altered = `${v}.${Buffer.from(JSON.stringify({ ...claims, e: claims.e + 3600 })).toString('base64url')}.${mac}`;
    for (const t of [altered, `${v}.${payload}.${'A'.repeat(43)}`, 'v1.e30.' + 'x'.repeat(43), 'garbage']) {
      const r = await proxied(portHost, `/echo?gpufleet_link=${encodeURIComponent(t)}`);
      expect(r.status, t).toBe(401);
      expect(r.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(r.headers['set-cookie']).toBeUndefined();
    }
    expect((await link(bob.key)).status).toBe(404);
    expect((await link(alice.key, 9000)).status).toBe(404);
    expect((await link(alice.key, 8888, { path: '//evil.example/' })).status).toBe(422);
  });
});

describe('a signed link in Chromium', () => {
  let browser: Browser;
  let relay: Port80Relay;
  beforeAll(async () => {
    relay = await port80Relay(() => cp.url);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_FLAGS, proxyResolverRule(DOMAIN, relay)] });
  });
  afterAll(async () => {
    await browser?.close();
    await relay?.close();
  });

  test("opens the pod's page, whose script's WebSocket reaches the pod with no gpufleet cookie; the cookie is host-only and HttpOnly; the URL keeps no token", async () => {
    const res = await cp.api(`/v2/pods/${pod.id}/ports/8888/link`, { method: 'POST', key: alice.key, json: { path: '/page' } });
    const { url } = (await res.json()) as J;
    const context = await browser.newContext();
    const page = await context.newPage();
    const answer = await page.goto(url as string);
    expect(answer?.status()).toBe(200);
    expect(page.url()).toBe(`http://${portHost}/page`);
    await page.waitForFunction("document.getElementById('out')?.textContent?.startsWith('{')", undefined, { timeout: 15_000 });
    const seen = JSON.parse((await page.textContent('#out'))!) as J;
    expect(seen).toEqual({ path: '/kernel', cookie: null, authorization: null, got: 'ping from the page' });
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'gpufleet-port', domain: portHost, path: '/', httpOnly: true, sameSite: 'Lax' });
    // the page itself, reloaded: the cookie alone opens it
    expect((await page.reload())?.status()).toBe(200);
    await context.close();
  });

  test('a forged link opens nothing and sets no cookie', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const answer = await page.goto(`http://${portHost}/page?gpufleet_link=v1.${Buffer.from('{"p":"x"}').toString('base64url')}.${'A'.repeat(43)}`);
    expect(answer?.status()).toBe(401);
    expect(await context.cookies()).toEqual([]);
    const bare = await page.goto(`http://${portHost}/page`);
    expect(bare?.status()).toBe(401);
    await context.close();
  });
});

describe('the review of issue 25 (regressions)', () => {
  const newLink = async (): Promise<URL> => {
    const res = await cp.api(`/v2/pods/${pod.id}/ports/8888/link`, { method: 'POST', key: alice.key, json: { path: '/echo' } });
    expect(res.status).toBe(201);
    return new URL(((await res.json()) as J).url as string);
  };

  test("the routes' prefix percent-encoded on the control plane's own Host (the router decodes it) serves no pod and redeems no link", async () => {
    const own = new URL(cp.url).host;
    for (const prefix of ['/%2Epod-port', '/%2epod-port', '/.pod-port', '/%2E%70od-port']) {
      const withKey = await proxied(own, `${prefix}/${pod.id}/8888/echo`, { headers: bearer(alice.key) });
      expect(withKey.status, `${prefix} ${withKey.body}`).toBe(404);
      const link = await newLink();
      const withLink = await proxied(own, `${prefix}/${pod.id}/8888/echo${link.search}`);
      expect(withLink.status, `${prefix} ${withLink.body}`).toBe(404);
      expect(withLink.headers['set-cookie']).toBeUndefined();
      // the link is unspent: it still opens the port on the port's own host
      expect((await proxied(portHost, `/echo${link.search}`)).status).toBe(303);
    }
    // another proxy host's name does not reach this pod's routes either
    const elsewhere = await proxied(`${pod.id}-9000.${DOMAIN}`, `/%2Epod-port/${pod.id}/8888/echo`, { headers: bearer(alice.key) });
    expect(elsewhere.status).not.toBe(200);
  });

  test("a pod's one Set-Cookie of gpufleet's name (undici gives it as a string) reaches the client neither on an answer nor on a WebSocket 101", async () => {
    const one = await proxied(portHost, '/set-one-cookie', { headers: bearer(alice.key) });
    expect(one.status, one.body).toBe(200);
    expect(one.body).toBe('ok');
    expect(one.headers['set-cookie']).toBeUndefined();
    const ws = new WebSocket(`${cp.url.replace(/^http/, 'ws')}/set-one-cookie`, { headers: { host: portHost, ...bearer(alice.key) } });
    const headers = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      ws.once('upgrade', (res) => resolve(res.headers));
      ws.once('error', reject);
    });
    ws.close();
    expect(headers['set-cookie']).toBeUndefined();
  });

  test('a same-site navigation into a frame (Sec-Fetch-Dest: iframe) may not use the cookie; a top-level one may', async () => {
    const link = await newLink();
    const cookie = (await proxied(portHost, `/echo${link.search}`)).headers['set-cookie']![0]!.split(';')[0]!;
    const nav = { cookie, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate' };
    const framed = await proxied(portHost, '/echo', { headers: { ...nav, 'sec-fetch-dest': 'iframe' } });
    expect(framed.status, framed.body).toBe(403);
    expect((await proxied(portHost, '/echo', { headers: { ...nav, 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'frame' } })).status).toBe(403);
    expect((await proxied(portHost, '/echo', { headers: { ...nav, 'sec-fetch-dest': 'document' } })).status).toBe(200);
    expect((await proxied(portHost, '/echo', { headers: nav })).status).toBe(200);
  });

  test('a proxy Host with a trailing dot names the same port', async () => {
    const r = await proxied(`${portHost}.`, '/echo', { headers: bearer(alice.key) });
    expect(r.status, r.body).toBe(200);
  });
});

describe('the proxy domain is a site of its own', () => {
  test('the server refuses to start when it shares a registrable domain with the control plane\'s origin (or is no DNS name, or overlaps the LB domain)', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-proxy-domain-'));
    try {
      const refused = (config: Partial<ServerConfig>) => startTestControlPlane({ dataDir, config });
      await expect(refused({ proxyDomain: 'pods.example.co.uk', publicUrl: 'https://api.example.co.uk' })).rejects.toThrow(/shares its registrable domain \(example\.co\.uk\)/);
      await expect(refused({ proxyDomain: 'pods_of.example.net' })).rejects.toThrow(/is not a DNS name/);
      await expect(refused({ proxyDomain: 'pods.example.net', lbDomain: 'lb.pods.example.net' })).rejects.toThrow(/overlap/);
      // `gpufleet serve` itself exits, saying why
      await expect(
        spawnControlPlane({ dataDir, port: await freePort(), env: { GPUFLEET_PROXY_DOMAIN: 'x.pods.example.co.uk', GPUFLEET_PUBLIC_URL: 'https://api.example.co.uk' } }),
      ).rejects.toThrow(/GPUFLEET_PROXY_DOMAIN=x\.pods\.example\.co\.uk shares its registrable domain/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    // another registrable domain, and a sibling under the private section of the list (github.io), start
    const ok = await startTestControlPlane({ config: { proxyDomain: 'pods.example-pods.net', publicUrl: 'https://api.example.com' } });
    await ok.close();
    const sibling = await startTestControlPlane({ config: { proxyDomain: 'pods.b.github.io', publicUrl: 'https://a.github.io' } });
    await sibling.close();
  });
});
