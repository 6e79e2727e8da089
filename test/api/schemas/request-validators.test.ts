// Issue 20 §2: route schemas validate bodies before the handler, and a refusal is what the service
// answered before they ran (the spec's 400/422, the registry's code, `detail`, `errors` as
// `$.path: message`). Two servers on the same control plane's services: one with the route
// validators (api/schemas/request-validators.ts), one with none (the services alone refuse, as
// before). Each bad request below goes to both; the answers must be identical, and never Fastify's
// own FST_ERR_VALIDATION. A refused request changes nothing, so sending it twice is harmless.
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildServer } from '../../../api/server.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';

let cp: TestControlPlane;
let checked: FastifyInstance;
let unchecked: FastifyInstance;
let user: { accountId: string; key: string };
const ids: Record<string, string> = {};

beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ id: 'gpu-1', gpus: 8 }]);
  checked = await buildServer({ services: cp.services });
  unchecked = await buildServer({ services: cp.services, validators: false });
  user = await cp.newAccount('read_write', 100);
  const post = async (url: string, body: unknown, key = user.key) => {
    const r = await checked.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    expect(r.statusCode, r.body).toBeLessThan(300);
    return JSON.parse(r.body) as { id: string };
  };
  ids.pod = (await post('/v2/pods', { name: 'p', image: 'busybox', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } })).id;
  ids.mounted = (await post('/v2/pods', { name: 'm', image: 'busybox', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 }, mounts: { persistent: { size: 20, path: '/w' } } })).id;
  ids.template = (await post('/v2/templates', { name: 't', image: 'busybox', serverless: true }, cp.adminKey)).id;
  ids.volume = (await post('/v2/network-volumes', { name: 'v', size: 10, dataCenterId: 'dc-test-1' })).id;
  ids.registry = (await post('/v2/registries', { name: 'r', username: 'u', password: 'p' })).id;
  ids.endpoint = (await post('/v1/endpoints', { name: 'e', templateId: ids.template, gpuTypeIds: ['NVIDIA H100 80GB HBM3'] }, cp.adminKey)).id;
});
afterAll(async () => {
  await checked?.close();
  await unchecked?.close();
  await cp?.close();
});

interface Bad {
  method: InjectOptions['method'];
  url: string;
  /** a JSON value, or `none` for no body at all */
  body: unknown;
  admin?: true;
}

const gpu = { id: 'NVIDIA H100 80GB HBM3', count: 1 };
const bad = (): Bad[] => [
  // pods: schema (422, every error at once), the mount conflict that answers 400 before the schema, field rules after it
  { method: 'POST', url: '/v2/pods', body: { name: 'x', image: 'busybox', gpu: { id: gpu.id, count: 'two' }, disk: 0, colour: 'blue' } },
  { method: 'POST', url: '/v2/pods', body: { name: 'x', image: 'busybox', gpu, mounts: { persistent: { size: 'big' }, network: [] } } },
  { method: 'POST', url: '/v2/pods', body: { name: 'x', image: 'busybox', gpu, ports: ['70000/http'] } },
  { method: 'POST', url: '/v2/pods', body: { name: 'x', image: '-rm', gpu, interruptible: false, bidPerGpu: 1 } },
  { method: 'POST', url: '/v2/pods', body: [] },
  { method: 'POST', url: '/v2/pods', body: 'none' },
  { method: 'POST', url: '/v2/pods?dryRun=true', body: { name: 'x' } },
  { method: 'PATCH', url: `/v2/pods/{pod}`, body: { name: 7, ports: 'all' } },
  // a mounts PATCH: the stored pod's rules (a kind not present at creation) come before the schema
  { method: 'PATCH', url: `/v2/pods/{pod}`, body: { mounts: { persistent: { size: 'x' } } } },
  { method: 'PATCH', url: `/v2/pods/{mounted}`, body: { mounts: { persistent: { size: 5 } }, extra: true } },
  { method: 'POST', url: `/v2/pods/{pod}/action`, body: { action: 'explode' } },
  { method: 'POST', url: `/v2/pods/{pod}/action`, body: 'none' },
  { method: 'POST', url: `/v2/pods/{pod}/exec`, body: { command: 'ls -la' } },
  { method: 'POST', url: `/v2/pods/{pod}/ports/8888/link`, body: { path: 'no-slash', other: 1 } },
  { method: 'PUT', url: '/v2/account/ssh-keys', body: { keys: ['not a key', 5] } },
  { method: 'PUT', url: '/v2/account/ssh-keys', body: { keys: 'one' } },
  // templates, volumes, registries, endpoints (v1 and v2), jobs, stack locks
  { method: 'POST', url: '/v2/templates', body: { name: '', image: 'busybox', category: 'TPU' } },
  { method: 'PATCH', url: '/v2/templates/{template}', body: { ports: ['8888/ftp'] } },
  { method: 'POST', url: '/v2/network-volumes', body: { name: 'v', size: -1 } },
  { method: 'PATCH', url: '/v2/network-volumes/{volume}', body: { size: '20' } },
  { method: 'POST', url: '/v2/registries', body: { name: 'r', username: 'u\u0000', password: 3 } },
  { method: 'PATCH', url: '/v2/registries/{registry}', body: { username: null } },
  { method: 'POST', url: '/v1/endpoints', body: { name: 'e', gpuTypeIds: 'all', workersMax: -1 }, admin: true },
  { method: 'PATCH', url: '/v1/endpoints/{endpoint}', body: { workersMin: 'one' }, admin: true },
  { method: 'POST', url: '/v2/serverless', body: { name: 3, templateId: 'tpl', bogus: [] }, admin: true },
  { method: 'PATCH', url: '/v2/serverless/{endpoint}', body: { workersMax: 1.5 }, admin: true },
  { method: 'POST', url: '/v2/{endpoint}/run', body: { inputs: {} }, admin: true },
  { method: 'POST', url: '/v2/{endpoint}/runsync', body: { input: {}, webhook: 5 }, admin: true },
  { method: 'POST', url: '/v2/stack-locks/main', body: 'none' },
  { method: 'POST', url: '/v2/stack-locks/main', body: { holder: '', ttlSeconds: 0 } },
  // accounts, keys, limits, credits, public endpoints, hosts (operator)
  { method: 'POST', url: '/v2/keys', body: { name: 5, scope: 'root' }, admin: true },
  { method: 'POST', url: '/v2/accounts', body: { email: 7 }, admin: true },
  { method: 'PATCH', url: '/v2/accounts/{account}/limits', body: { maxGpus: -2, gpusByType: [] }, admin: true },
  { method: 'POST', url: '/v2/accounts/{account}/credits', body: { amount: '10' }, admin: true },
  { method: 'POST', url: '/v2/public-endpoints', body: { slug: 'UPPER', pricing: {} }, admin: true },
  { method: 'POST', url: '/v2/hosts', body: { ssh: 5 }, admin: true },
  { method: 'POST', url: '/v2/hosts/gpu-1/drain', body: { drained: 'yes' }, admin: true },
  { method: 'PATCH', url: '/v2/hosts/gpu-1', body: { overlayAddress: 7, other: true }, admin: true },
  { method: 'POST', url: '/v2/hosts/gpu-1/diagnose', body: { level: 3 }, admin: true },
  { method: 'POST', url: '/v2/hosts/gpu-1/gpus/GPU-0000aaaa/clear', body: { reason: 5 }, admin: true },
];

async function answer(app: FastifyInstance, b: Bad): Promise<{ status: number; type: string | undefined; body: unknown }> {
  const url = b.url.replace(/\{(\w+)\}/g, (_, k: string) => (k === 'account' ? user.accountId : ids[k]!));
  const res = await app.inject({
    method: b.method,
    url,
    headers: { authorization: `Bearer ${b.admin ? cp.adminKey : user.key}`, ...(b.body !== 'none' ? { 'content-type': 'application/json' } : {}) },
    ...(b.body !== 'none' ? { payload: JSON.stringify(b.body) } : {}),
  });
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, body: JSON.parse(res.body) as unknown };
}

test('each refusal is the answer the service gave before the route schemas ran, never FST_ERR_VALIDATION', async () => {
  const differ: string[] = [];
  for (const b of bad()) {
    const withSchemas = await answer(checked, b);
    const servicesAlone = await answer(unchecked, b);
    expect(withSchemas.status, `${b.method} ${b.url}: ${JSON.stringify(withSchemas.body)}`).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(withSchemas.body)).not.toContain('FST_ERR');
    if (JSON.stringify(withSchemas) !== JSON.stringify(servicesAlone))
      differ.push(`${b.method} ${b.url} ${JSON.stringify(b.body)}:\n  schemas ${JSON.stringify(withSchemas)}\n  service ${JSON.stringify(servicesAlone)}`);
  }
  expect(differ, differ.join('\n')).toEqual([]);
});

test('a body the schema refuses reaches no handler: the route validator answers it', async () => {
  // the schema's refusal comes before the service looks the pod up: a bad body on a pod that does
  // not exist is the body's 422 with route validators, the service's 404 without (docs/validation.md)
  const b: Bad = { method: 'PATCH', url: '/v2/pods/no-such-pod', body: { name: 7 } };
  const withSchemas = await answer(checked, b);
  const servicesAlone = await answer(unchecked, b);
  expect(withSchemas).toMatchObject({ status: 422, body: { code: 'VALIDATION_FAILED', errors: ['$.name: must be string'] } });
  expect(servicesAlone).toMatchObject({ status: 404 });
});
