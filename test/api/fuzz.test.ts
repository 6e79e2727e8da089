// Property tests over the v2 pod interface: whatever arrives (random JSON values, random objects,
// valid pod bodies with random mutations, random paths and methods), the answer is never a 5xx, every
// 4xx is problem+json, and a rejected request changes nothing the caller can see: pods, templates,
// network volumes, registries, endpoints, keys, the account and billing (visible-state.ts).
import fc from 'fast-check';
import { STATUS_CODES } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { H100, createPod, expectPodView, gpuBody, keyFor, startPodsControlPlane, cpuBody, DC } from './pods-helpers.ts';
import { expectNoChangeIfRejected, type Observer } from './visible-state.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

let cp: TestControlPlane;
let user: { accountId: string; key: string };
let caller: Observer;
let pods: { plain: string; persistent: string; network: string };
const VOL = 'vol_fuzz';

beforeAll(async () => {
  cp = await startPodsControlPlane({ rateLimits: 'minute=10000000,hour=10000000,day=10000000' });
  user = await cp.newAccount('read_write');
  caller = { key: user.key, adminKey: await keyFor(cp, user.accountId, 'admin') };
  const now = new Date().toISOString();
  await cp.services.store.transact((tx) =>
    tx.put('networkVolumes', { id: VOL, accountId: user.accountId, name: VOL, size: 50, dataCenterId: DC, type: 'STANDARD', tags: {}, createdAt: now, updatedAt: now }),
  );
  pods = {
    plain: (await createPod(cp, gpuBody(), user.key)).body.id,
    persistent: (await createPod(cp, gpuBody({ mounts: { persistent: { size: 20, path: '/w' } } }), user.key)).body.id,
    network: (await createPod(cp, cpuBody({ mounts: { network: [{ volumeId: VOL, path: '/d' }] } }), user.key)).body.id,
  };
});
afterAll(async () => cp?.close());

interface Answer {
  status: number;
  type: string;
  text: string;
}

async function send(method: string, path: string, body?: string, contentType = 'application/json'): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${user.key}` };
  if (body !== undefined) headers['content-type'] = contentType;
  const res = await fetch(cp.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** the invariants every answer keeps */
function checkAnswer(a: Answer, what: string, method = 'GET'): void {
  expect(a.status, `${what} → ${a.status} ${a.text}`).toBeLessThan(500);
  if (a.status >= 400) {
    expect(a.type, `${what} → ${a.status} ${a.text}`).toMatch(/^application\/problem\+json/);
    if (method === 'HEAD') return;
    const p = JSON.parse(a.text) as { title: string; status: number; detail: string; errors?: unknown };
    expect(p.status).toBe(a.status);
    expect(p.title).toBe(STATUS_CODES[a.status]);
    expect(typeof p.detail).toBe('string');
    if (p.errors !== undefined) {
      expect(Array.isArray(p.errors)).toBe(true);
      for (const e of p.errors as unknown[]) expect(typeof e).toBe('string');
    }
  }
}

/** runs `request`; a rejection must leave everything the account can see exactly as it was */
async function unchangedIfRejected(what: string, method: string, request: () => Promise<Answer>): Promise<Answer> {
  const a = await expectNoChangeIfRejected(cp, what, { caller }, request, (x) => x.status >= 400);
  checkAnswer(a, what, method);
  if (a.status >= 400) return a;
  if ((a.status === 200 || a.status === 201) && method !== 'HEAD') {
    const v = JSON.parse(a.text);
    if (v && typeof v === 'object' && 'status' in v && 'actions' in v) expectPodView(v);
  }
  return a;
}

const toBody = (v: unknown): string => JSON.stringify(v) ?? '';

// valid bodies with random mutations: drop a field, set one (top level or nested) to anything, add one
const anyValue = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.integer({ min: -5, max: 70000 }),
  fc.constantFrom(0, 1, 2, 3, 9, 10, 16, 64, -1, 1.5, '', 'x', null, true, [], {}, '22/tcp', '8888', H100, 'cpu3c'),
);
const fieldPaths = [
  'name', 'image', 'args', 'disk', 'ports', 'env', 'registry', 'mounts', 'locked', 'globalNetworking', 'cloud',
  'gpu', 'gpu.id', 'gpu.count', 'cpu', 'cpu.id', 'cpu.vcpuCount', 'cpu.memory', 'dataCenterIds', 'templateId', 'tags',
  'mounts.persistent', 'mounts.persistent.size', 'mounts.persistent.path', 'mounts.network', 'mounts.network.0',
  'mounts.network.0.volumeId', 'mounts.network.0.path', 'ports.0', 'env.KEY', 'bogus',
];
const mutation = fc.record({
  op: fc.constantFrom('set', 'delete'),
  path: fc.constantFrom(...fieldPaths),
  value: anyValue,
});

function mutate(base: Record<string, unknown>, muts: { op: string; path: string; value: unknown }[]): unknown {
  const body = structuredClone(base) as Record<string, unknown>;
  for (const m of muts) {
    const parts = m.path.split('.');
    let cur: Record<string, unknown> = body;
    for (const p of parts.slice(0, -1)) {
      if (typeof cur[p] !== 'object' || cur[p] === null) cur[p] = /^\d+$/.test(parts[parts.indexOf(p) + 1] ?? '') ? [] : {};
      cur = cur[p] as Record<string, unknown>;
    }
    const last = parts.at(-1)!;
    if (m.op === 'delete') delete cur[last];
    else cur[last] = m.value;
  }
  return body;
}

const validCreate = fc.constantFrom(
  () => gpuBody(),
  () => cpuBody(),
  () => gpuBody({ ports: ['22/tcp', '8888/http'], env: { A: 'b' }, mounts: { persistent: { size: 20, path: '/ws' } } }),
  () => cpuBody({ mounts: { network: [{ volumeId: VOL, path: '/data' }] } }),
);
const validPatch = fc.constantFrom<Record<string, unknown>>(
  { args: 'x' },
  { disk: 3, ports: ['9000/tcp'] },
  { mounts: { persistent: { size: 20, path: '/w2' } } },
  { mounts: { network: [{ volumeId: VOL, path: '/d2' }] } },
  { env: { K: 'v' }, locked: false },
);

describe('fuzz', () => {
  test('POST /v2/pods with random bodies', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.anything(), fc.object(), fc.jsonValue()), async (v) => {
        await unchangedIfRejected(`POST /v2/pods ${toBody(v)}`, 'POST', () => send('POST', '/v2/pods', toBody(v)));
      }),
      { numRuns: RUNS },
    );
  });

  test('POST /v2/pods with mutated valid bodies', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(validCreate, fc.array(mutation, { minLength: 1, maxLength: 4 }), async (make, muts) => {
        const body = mutate(make(), muts);
        const a = await unchangedIfRejected(`POST /v2/pods ${toBody(body)}`, 'POST', () => send('POST', '/v2/pods', toBody(body)));
        // keep the fleet from filling up: what got created is deleted again
        if (a.status === 201) expect((await send('DELETE', `/v2/pods/${JSON.parse(a.text).id}`)).status).toBe(204);
      }),
      { numRuns: RUNS },
    );
  });

  test('PATCH /v2/pods/{id} with random and mutated bodies', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('plain', 'persistent', 'network', 'missing') as fc.Arbitrary<keyof typeof pods | 'missing'>,
        fc.oneof(
          fc.anything().map((v) => toBody(v)),
          fc.object().map((v) => toBody(v)),
          fc.tuple(validPatch, fc.array(mutation, { maxLength: 3 })).map(([b, m]) => toBody(mutate(b, m))),
        ),
        async (which, body) => {
          const id = which === 'missing' ? 'no-such-pod' : pods[which];
          // a pod renamed by a successful PATCH keeps its id: nothing else to track
          await unchangedIfRejected(`PATCH ${which} ${body}`, 'PATCH', () => send('PATCH', `/v2/pods/${id}`, body));
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('POST /v2/pods/{id}/action with random bodies', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything(),
          fc.object(),
          fc.record({ action: fc.oneof(fc.constantFrom('start', 'stop', 'restart', 'terminate', 'pause', 'STOP', ''), fc.anything()) }),
          fc.record({ action: fc.constantFrom('start', 'stop', 'restart'), extra: fc.anything() }),
        ),
        fc.constantFrom('plain', 'persistent', 'network', 'missing') as fc.Arbitrary<keyof typeof pods | 'missing'>,
        async (v, which) => {
          const id = which === 'missing' ? 'no-such-pod' : pods[which];
          const a = await unchangedIfRejected(`action ${which} ${toBody(v)}`, 'POST', () => send('POST', `/v2/pods/${id}/action`, toBody(v)));
          if (a.status === 204 && which !== 'missing') {
            // terminated: replace it so later runs still have a live pod of that kind
            const again = await send('POST', '/v2/pods', toBody(which === 'plain' ? gpuBody() : which === 'persistent' ? gpuBody({ mounts: { persistent: { size: 20, path: '/w' } } }) : cpuBody({ mounts: { network: [{ volumeId: VOL, path: '/d' }] } })));
            expect(again.status, again.text).toBe(201);
            pods[which] = JSON.parse(again.text).id;
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('random methods, paths and bodies under /v2', { timeout: 300_000 }, async () => {
    const segment = fc.oneof(
      fc.constantFrom('pods', 'action', 'catalog', 'cpus', 'gpus', 'datacenters', 'keys', 'accounts', 'account', 'openapi.json', '', '..', '.', '%2e%2e', '%00', '%zz', '%', 'pods?x=1', '?status=BOGUS', '#frag', 'x'.repeat(150)),
      fc.constantFrom('templates', 'network-volumes', 'registries', 'billing', 'endpoints', 'serverless', 'stack-locks', VOL),
      fc.constant('POD_ID'),
      fc.string({ maxLength: 12 }).map(encodeURIComponent),
      fc.string({ maxLength: 6 }),
    );
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS');
    const body = fc.option(fc.oneof(fc.jsonValue().map((v) => toBody(v)), fc.string({ maxLength: 40 })), { nil: undefined });
    const contentType = fc.constantFrom('application/json', 'text/plain', 'application/octet-stream', 'application/json; charset=latin1');
    await fc.assert(
      fc.asyncProperty(method, fc.array(segment, { minLength: 0, maxLength: 4 }), body, contentType, async (m, segs, b, ct) => {
        const path = '/v2/' + segs.map((s) => (s === 'POD_ID' ? pods.plain : s)).join('/');
        let url: URL;
        try {
          url = new URL(cp.url + path);
        } catch {
          return; // not a URL fetch could send
        }
        if (!url.pathname.startsWith('/v2/')) return; // the client normalised ".." out of /v2: another property
        // DELETE of a pod succeeds and terminates it; keep the fixture pod by skipping successful-DELETE shapes
        if (m === 'DELETE' && url.pathname === `/v2/pods/${pods.plain}`) return;
        const withBody = b !== undefined && m !== 'GET' && m !== 'HEAD';
        await unchangedIfRejected(`${m} ${path} ${ct} ${b ?? ''}`, m, () => send(m, url.pathname + url.search, withBody ? b : undefined, ct));
      }),
      { numRuns: RUNS },
    );
  });
});
