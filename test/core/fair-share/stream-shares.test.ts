// Each account's share of a host's streams (issue 18, item 3; docs/security.md "Stream shares"): a
// host serves 8 log and exec streams at once, and one account may hold at most 4 of them. Before,
// eight log streams opened by one tenant made the next tenant's logs and exec on that host 503. A real
// sshd test host, the real Docker engine, two accounts with a pod each on it, streams held open.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { readSse, type SseStream } from '../../harness/sse-reader.ts';
import { provisioner } from '../../../provisioner/index.ts';
import { waitFor as waitForHarness } from '../../harness/wait-for.ts';

const IDLE = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
let cp: TestControlPlane;
let host: TestHost;
let hostId: string;
let image: string;
let a: { accountId: string; key: string; podId: string };
let b: { accountId: string; key: string; podId: string };

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 100);

async function tenant(name: string): Promise<{ accountId: string; key: string; podId: string }> {
  const acct = await cp.newAccount('read_write');
  const res = await cp.api('/v2/pods', { key: acct.key, method: 'POST', json: { name, image, args: IDLE, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } } });
  expect(res.status).toBe(201);
  const podId = ((await res.json()) as { id: string }).id;
  await waitFor(`${name} RUNNING`, async () => ((await (await cp.api(`/v2/pods/${podId}`, { key: acct.key })).json()) as { status: string }).status === 'RUNNING');
  return { ...acct, podId };
}

const logs = (t: { key: string; podId: string }): Promise<SseStream> =>
  readSse(`${cp.url}/v2/pods/${t.podId}/logs?source=container&tail=0`, { headers: { authorization: `Bearer ${t.key}` } });

/** POST exec; the whole SSE answer as text */
async function exec(t: { key: string; podId: string }, argv: string[]): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const res = await fetch(`${cp.url}/v2/pods/${t.podId}/exec`, { method: 'POST', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ command: argv }) });
  return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
}

/** the HTTP status of an exec WebSocket upgrade (a refusal comes before it) */
function upgrade(t: { key: string; podId: string }): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(`${cp.url.replace(/^http/, 'ws')}/v2/pods/${t.podId}/exec/ws?command=true`, { headers: { authorization: `Bearer ${t.key}` } });
  return new Promise((resolve, reject) => {
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
  });
}

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `shares-${process.pid}`, gpus: [0, 1].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-shares' });
  a = await tenant('a');
  b = await tenant('b');
}, 180_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe("an account's share of a host's streams", () => {
  test("one tenant's eight log streams: the fifth and on are 429 with Retry-After, and the other tenant's logs and exec on that host still work", async () => {
    const held: SseStream[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const s = await logs(a);
        expect(s.status).toBe(200);
        held.push(s);
      }
      expect(cp.services.sshPool.openStreams(hostId)).toBe(4);
      for (let i = 4; i < 8; i++) {
        const s = await logs(a);
        expect(s.status).toBe(429);
        expect(s.contentType).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(s.text)).toMatchObject({ status: 429, code: 'HOST_STREAM_SHARE' });
      }
      // its exec is counted in the same share, and refused the same way (a session before the upgrade)
      const mine = await exec(a, ['echo', 'x']);
      expect(mine.status).toBe(429);
      expect(Number(mine.retryAfter)).toBeGreaterThan(0);
      const ws = await upgrade(a);
      expect(ws.status).toBe(429);
      expect(JSON.parse(ws.body)).toMatchObject({ code: 'HOST_STREAM_SHARE' });
      expect(cp.services.sshPool.openStreams(hostId)).toBe(4); // nothing more was opened on the host
      // the other tenant: its logs stream and its exec runs, on the same host
      const theirs = await logs(b);
      expect(theirs.status).toBe(200);
      held.push(theirs);
      const run = await exec(b, ['echo', 'still-served']);
      expect(run.status).toBe(200);
      expect(run.text).toContain('still-served');
      expect(await upgrade(b)).toMatchObject({ status: 101 });
    } finally {
      for (const s of held) s.close();
    }
    // closed streams give the share back
    await waitFor('the streams given back', async () => cp.services.streamShares.heldBy(a.accountId, hostId) === 0, 10_000);
    const again = await logs(a);
    expect(again.status).toBe(200);
    again.close();
  }, 60_000);
});
