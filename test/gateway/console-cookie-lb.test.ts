// The console's session cookie never reaches a load-balancing worker (docs/console.md, "Sessions and
// security"; issue 26): a real signed-in session's cookie sent to `/v2/<endpoint id>/…` and to host
// `<endpoint id>.<GPUFLEET_LB_DOMAIN>` is not accepted there as a credential (the worker routes take a
// key only), and when the request is let through by its Bearer key the worker that echoes its request
// headers sees no gpufleet cookie, while the caller's other cookies reach it.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLocalLbWorld, type LocalLbWorld } from '../harness/lb-local.ts';
import { waitFor } from '../harness/wait-for.ts';

let world: LocalLbWorld;
let session: string;
let csrf: string;

beforeAll(async () => {
  world = await startLocalLbWorld({ workers: 1, config: { lbDomain: 'lb.test' } });
  await waitFor('the worker in rotation', async () => {
    const list = (await (await world.cp.api(`/v2/serverless/${world.endpointId}/workers`, { key: world.key })).json()) as { workers: { status: string }[] };
    return list.workers.some((w) => w.status === 'IDLE');
  });
  const res = await fetch(`${world.cp.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: world.key }) });
  expect(res.status).toBe(204);
  session = res.headers.get('set-cookie')!.split(';')[0]!;
  csrf = ((await (await fetch(`${world.cp.url}/console/session`, { headers: { cookie: session } })).json()) as { csrfToken: string }).csrfToken;
  // the session is good on the API itself
  expect((await fetch(`${world.cp.url}/v2/serverless/${world.endpointId}`, { headers: { cookie: session } })).status).toBe(200);
});
afterAll(async () => world?.close());

/** a request to the control plane's port with these headers (Host too) */
function send(path: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; body: string }> {
  const port = new URL(world.cp.url).port;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a load-balancing endpoint and the console cookie', () => {
  test('the cookie alone is no credential there, on /v2/<id>/… and on <id>.<domain>, even with the CSRF token and the console Origin', async () => {
    const port = new URL(world.cp.url).port;
    for (const [path, host] of [
      [`/v2/${world.endpointId}/echo`, `127.0.0.1:${port}`],
      ['/echo', `${world.endpointId}.lb.test:${port}`],
    ] as const) {
      for (const method of ['GET', 'POST']) {
        const res = await send(path, { host, cookie: session, 'x-csrf-token': csrf, origin: world.cp.url }, method);
        expect(res.status, `${method} ${host}${path}`).toBe(401);
        expect(res.body).not.toContain('"worker"');
      }
    }
  });

  test('with the Bearer key, the worker that echoes its headers sees no gpufleet cookie, and the caller\'s own cookies', async () => {
    const port = new URL(world.cp.url).port;
    const secret = session.split('=')[1]!;
    const cookie = `theme=dark; ${session}; __Host-gpufleet-session=${secret}; lang=en`;
    for (const [path, host] of [
      [`/v2/${world.endpointId}/echo`, `127.0.0.1:${port}`],
      ['/echo', `${world.endpointId}.lb.test:${port}`],
    ] as const) {
      const res = await send(path, { host, cookie, authorization: `Bearer ${world.key}` });
      expect(res.status, `${host}${path}`).toBe(200);
      const seen = JSON.parse(res.body) as { headers: Record<string, string> };
      expect(seen.headers.cookie).toBe('theme=dark; lang=en');
      expect(res.body).not.toContain(secret);
      expect(res.body).not.toContain('gpufleet-session');
      expect(seen.headers.authorization).toBeUndefined();
    }
    // only gpufleet cookies: no Cookie header at all reaches the worker
    const only = await send(`/v2/${world.endpointId}/echo`, { cookie: session, authorization: `Bearer ${world.key}` });
    expect((JSON.parse(only.body) as { headers: Record<string, string> }).headers.cookie).toBeUndefined();
  });
});
