// Shared by the pod API tests: a control plane with record-only hosts, a fetch wrapper that checks
// what every /v2 response must carry (rate-limit headers), and checks of the Pod view (spec 2.1,
// against model/schemas/pod-view.ts) and of problem+json bodies (spec 7.1).
import { STATUS_CODES } from 'node:http';
import { parseList } from 'structured-headers';
import { expect } from 'vitest';
import { podViewSchema } from '../../model/schemas/pod-view.ts';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { formatErrors } from '../../model/rules/validation.ts';
import { actionsFor } from '../../model/records/pod-state-machine.ts';
import type { PodRecord, PodStatus } from '../../model/records/pod.ts';
import { startTestControlPlane, type TestControlPlane, type TestControlPlaneOptions } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

export const H100 = 'NVIDIA H100 80GB HBM3';
export const A100 = 'NVIDIA A100-SXM4-80GB';
export const RTX4090 = 'NVIDIA GeForce RTX 4090';
export const DC = 'dc-test-1';
export const DC2 = 'dc-test-2';

/** A control plane with plenty of H100s and CPU capacity in two data centers, no provisioner. */
export async function startPodsControlPlane(opts: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const cp = await startTestControlPlane(opts);
  await seedHosts(cp.services.store, [
    { id: 'gpu-a', gpus: 8, dataCenterId: DC, diskFreeGb: 1_000_000, cpuCount: 4096, memoryGb: 65536 },
    { id: 'gpu-b', gpus: 8, dataCenterId: DC, diskFreeGb: 1_000_000, cpuCount: 4096, memoryGb: 65536 },
    { id: 'gpu-c', gpus: 8, dataCenterId: DC2, diskFreeGb: 1_000_000, cpuCount: 4096, memoryGb: 65536 },
    { id: 'cpu-a', gpus: 0, dataCenterId: DC, cpuCount: 100_000, memoryGb: 1_000_000, diskFreeGb: 10_000_000 },
    { id: 'cpu-b', gpus: 0, dataCenterId: DC2, cpuCount: 100_000, memoryGb: 1_000_000, diskFreeGb: 10_000_000 },
  ]);
  return cp;
}

let seq = 0;
export const uniqueName = (prefix = 'pod') => `${prefix}-${process.pid}-${++seq}`;

export function gpuBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: uniqueName('gpu'), image: 'busybox:1.36', gpu: { id: H100, count: 1 }, disk: 5, ...extra };
}

export function cpuBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: uniqueName('cpu'), image: 'busybox:1.36', cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, disk: 5, ...extra };
}

export interface Call {
  res: Response;
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export interface CallInit extends RequestInit {
  key?: string | null;
  json?: unknown;
  /** skip the rate-limit header check (public routes) */
  unlimited?: boolean;
}

/** fetch, read the body, and check the RateLimit headers every limited /v2 response carries */
export async function call(cp: TestControlPlane, path: string, init: CallInit = {}): Promise<Call> {
  const { unlimited, ...rest } = init;
  const res = await cp.api(path, rest);
  const text = await res.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!unlimited && path.startsWith('/v2/')) expectRateLimitHeaders(res);
  // every pod any response carries is checked against the Pod of 2.1
  if ((res.status === 200 || res.status === 201) && body && typeof body === 'object' && path.startsWith('/v2/pods')) {
    const b = body as { pods?: unknown[]; actions?: unknown; status?: unknown };
    if (Array.isArray(b.pods)) b.pods.forEach(expectPodView);
    else if ('actions' in b && 'status' in b) expectPodView(b);
  }
  return { res, status: res.status, body, text };
}

export interface WindowHeader {
  name: string;
  params: Record<string, number>;
}

/** RateLimit and RateLimit-Policy parsed as Structured Field lists, one member per window */
export function expectRateLimitHeaders(res: Response): { limit: WindowHeader[]; policy: WindowHeader[] } {
  const rl = res.headers.get('ratelimit');
  const policy = res.headers.get('ratelimit-policy');
  expect(rl, `RateLimit header on ${res.status} ${res.url}`).toBeTruthy();
  expect(policy, `RateLimit-Policy header on ${res.status} ${res.url}`).toBeTruthy();
  const parse = (h: string): WindowHeader[] =>
    parseList(h).map((item) => {
      const [bare, params] = item as [unknown, Map<string, unknown>];
      // a member is a token or string naming the window
      const name = typeof bare === 'string' ? bare : String((bare as { toString(): string }).toString());
      const p: Record<string, number> = {};
      for (const [k, v] of params) {
        expect(typeof v, `${k} of ${name}`).toBe('number');
        p[k] = v as number;
      }
      return { name, params: p };
    });
  const limit = parse(rl!);
  const pol = parse(policy!);
  expect(limit.map((w) => w.name)).toEqual(['minute', 'hour', 'day']);
  expect(pol.map((w) => w.name)).toEqual(['minute', 'hour', 'day']);
  const seconds = { minute: 60, hour: 3600, day: 86400 } as Record<string, number>;
  for (const w of pol) {
    expect(Object.keys(w.params).sort()).toEqual(['q', 'w']);
    expect(w.params.w).toBe(seconds[w.name]);
    expect(Number.isInteger(w.params.q) && w.params.q! > 0).toBe(true);
  }
  for (const w of limit) {
    expect(Object.keys(w.params).sort()).toEqual(['r', 't']);
    const quota = pol.find((p) => p.name === w.name)!.params.q!;
    expect(w.params.r).toBeGreaterThanOrEqual(0);
    expect(w.params.r).toBeLessThanOrEqual(quota);
    expect(w.params.t).toBeGreaterThanOrEqual(0);
    expect(w.params.t).toBeLessThanOrEqual(seconds[w.name]!);
  }
  return { limit, policy: pol };
}

// strict like the model's Ajv (unknown keywords are errors), except strictRequired: the oneOf
// branches name gpu/cpu in `required` without redefining them, which is what "exactly one" needs
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const viewAjv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
addFormats(viewAjv);
const validatePodView = viewAjv.compile(podViewSchema);

/** Every field of spec 2.1 present with its type; the invariants of 3.1 (actions, cost, runtime). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectPodView(pod: any): void {
  const ok = validatePodView(pod);
  expect(ok ? [] : formatErrors(validatePodView.errors), JSON.stringify(pod)).toEqual([]);
  expect(pod.actions).toEqual(actionsFor(pod.status as PodStatus, pod.locked));
  if (pod.status === 'EXITED' || pod.status === 'TERMINATED') expect(pod.cost).toBe(0);
  if (pod.status !== 'RUNNING') expect(pod.runtime).toBeNull();
  for (const p of pod.ports as string[]) expect(p).toMatch(/^\d{1,5}\/[a-z]+$/);
  if (pod.globalNetworking.enabled === false) {
    expect(pod.globalNetworking.ip).toBeUndefined();
    expect(pod.globalNetworking.internalDns).toBeUndefined();
  }
}

/** application/problem+json with title = reason phrase, status, detail; `errors` lines `$...: message` */
export function expectProblem(c: Call, status: number, opts: { code?: string; errorMatching?: RegExp | string } = {}): void {
  expect(c.status, c.text).toBe(status);
  expect(c.res.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json/);
  expect(typeof c.body).toBe('object');
  expect(c.body.title).toBe(STATUS_CODES[status]);
  expect(c.body.status).toBe(status);
  expect(typeof c.body.detail).toBe('string');
  expect(c.body.detail.length).toBeGreaterThan(0);
  if (c.body.errors !== undefined) {
    expect(Array.isArray(c.body.errors)).toBe(true);
    for (const e of c.body.errors) expect(typeof e).toBe('string');
  }
  if (opts.code) expect(c.body.code, c.text).toBe(opts.code);
  if (opts.errorMatching !== undefined) {
    const errs: string[] = c.body.errors ?? [];
    const m = opts.errorMatching;
    expect(
      errs.some((e) => (typeof m === 'string' ? e === m || e.startsWith(m) : m.test(e))),
      `errors ${JSON.stringify(errs)} should contain ${String(m)}`,
    ).toBe(true);
  }
}

/** validation errors use JSONPath: `$`, `$.a.b`, `$.a[0].b`, then `: ` and a message */
export function expectJsonPathErrors(c: Call): void {
  const errs: string[] = c.body.errors ?? [];
  expect(errs.length, c.text).toBeGreaterThan(0);
  for (const e of errs) expect(e, c.text).toMatch(/^\$(\.[A-Za-z_$][\w$]*|\[\d+\]|\["[^"]*"\])*: \S/);
}

export async function createPod(cp: TestControlPlane, body: Record<string, unknown>, key?: string): Promise<Call> {
  const c = await call(cp, '/v2/pods', { method: 'POST', json: body, ...(key ? { key } : {}) });
  expect(c.status, c.text).toBe(201);
  expectPodView(c.body);
  return c;
}

/** All of an account's pods (terminated included), for "nothing changed" checks */
export async function snapshotPods(cp: TestControlPlane, key?: string): Promise<string> {
  const c = await call(cp, '/v2/pods?includeTerminated=true', key ? { key } : {});
  expect(c.status).toBe(200);
  return JSON.stringify(c.body.pods.map((p: { runtime: unknown }) => ({ ...p, runtime: null })));
}

/** Moves a stored pod to `status` as the provisioner would after observing the host. */
export async function forceStatus(cp: TestControlPlane, id: string, status: PodStatus, extra: Partial<PodRecord> = {}): Promise<void> {
  await cp.services.store.transact(async (tx) => {
    const pod = (await tx.get('pods', id))!;
    const running = status === 'RUNNING';
    tx.put('pods', {
      ...pod,
      status,
      startedAt: running ? new Date(Date.now() - 5000).toISOString() : pod.startedAt,
      observed: running
        ? {
            containerId: 'c0ffee',
            containerStartedAt: new Date(Date.now() - 5000).toISOString(),
            ports: [{ private: 8888, public: 40001, type: 'http', ip: '192.0.2.1' }],
            gpus: pod.gpu ? [{ util: 10, memoryUtil: 20 }] : [],
            cpuUtil: 5,
            memoryUtil: 7,
            observedAt: new Date().toISOString(),
          }
        : pod.observed,
      ...extra,
    });
  });
}

/** another key in an existing account */
export async function keyFor(cp: TestControlPlane, accountId: string, scope: 'read' | 'read_write' | 'admin', expiresAt?: string): Promise<string> {
  return (await cp.services.keys.createKey({ accountId, name: `k-${scope}`, scope, expiresAt: expiresAt ?? null })).key;
}
