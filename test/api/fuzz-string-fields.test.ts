// Property tests over the string fields of pods and templates (issue 8): control characters, lone
// surrogates, leading dashes, option-looking words and very long values, sent through a listening
// server by REST (POST/PATCH pods, POST templates and pods from them) and GraphQL. Whatever arrives:
// never a 5xx; a refusal is problem+json and changes nothing the account can see (visible-state.ts:
// pods, templates, volumes, registries, endpoints, keys, account, billing); and for what is accepted, the
// `docker run` argument list built from the stored pod holds no user value in an option position
// and carries its env values byte for byte.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { userOptionProblems } from '../harness/run-argv.ts';
import { runSpec, type RunSpec } from '../../provisioner/container-spec.ts';
import { runpodctl } from './graphql/gql-client.ts';
import { H100, gpuBody, keyFor, startPodsControlPlane } from './pods-helpers.ts';
import { expectNoChangeIfRejected, type Observer } from './visible-state.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

let cp: TestControlPlane;
let user: { accountId: string; key: string };
let caller: Observer;
let patchTarget: string;

beforeAll(async () => {
  // localhost:5000 is allowed, so the fuzz reaches its host-side checks (docs/security.md, registries a tenant may name)
  cp = await startPodsControlPlane({ rateLimits: 'minute=10000000,hour=10000000,day=10000000', config: { allowedRegistries: ['localhost:5000'] } });
  user = await cp.newAccount('read_write');
  caller = { key: user.key, adminKey: await keyFor(cp, user.accountId, 'admin') };
  patchTarget = (await send('POST', '/v2/pods', gpuBody())).json.id;
});
afterAll(async () => cp?.close());

interface Answer {
  status: number;
  type: string;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

async function send(method: string, path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${user.key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(cp.url + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* checked by the caller */
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json };
}

const refused = (a: Answer) => a.status >= 400;

function checkAnswer(a: Answer, what: string): void {
  expect(a.status, `${what} → ${a.status} ${a.text.slice(0, 500)}`).toBeLessThan(500);
  if (a.status >= 400) {
    expect(a.type, what).toMatch(/^application\/problem\+json/);
    for (const e of (a.json?.errors ?? []) as unknown[]) expect(String(e)).toMatch(/^\$/);
  }
}

/** env as the container gets it: the env file's lines, then the `--env=` words (docker's order) */
function deliveredEnv(s: RunSpec): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (line: string) => {
    const i = line.indexOf('=');
    out[line.slice(0, i)] = line.slice(i + 1);
  };
  for (const line of s.envFile.split('\n')) if (line) put(line);
  for (const w of s.envArgs) put(w.slice('--env='.length));
  return out;
}

/** the argv property and exact env for a stored pod */
async function checkBuiltArgv(podId: string, what: string): Promise<void> {
  const pod = (await cp.services.store.get('pods', podId))!;
  const spec = runSpec(pod, pod.hostId ?? 'h');
  expect(userOptionProblems(spec, pod), what).toEqual([]);
  const env = deliveredEnv(spec);
  for (const [k, v] of Object.entries(pod.env)) if (!k.startsWith('NVIDIA_')) expect(env[k], `${what}: env ${k}`).toBe(v);
}

// strings a host or docker could misread
const controlChar = fc.integer({ min: 0, max: 0x9f }).filter((n) => n < 0x20 || n >= 0x7f).map((n) => String.fromCharCode(n));
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((n) => String.fromCharCode(n));
const optionWord = fc.constantFrom('--volume=/:/host', '--privileged', '-v', '/:/host', '--network=host', '--cap-add=ALL', '-e', '--', '-', '--env-file=/etc/shadow', '--device=/dev/mem');
const imageLike = fc.constantFrom('busybox', 'busybox:1.36', 'ghcr.io/org/app:v1', 'localhost:5000/x', `app@sha256:${'a'.repeat(64)}`);
const nasty: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: fc.oneof(controlChar, loneSurrogate, fc.constantFrom('a', '-', ' ', '\t', ':', '=', '/', '"', "'", '\\', '$')), maxLength: 20 }),
  optionWord,
  fc.tuple(optionWord, imageLike).map(([o, i]) => `${o} ${i}`),
  fc.tuple(imageLike, fc.oneof(controlChar, loneSurrogate, optionWord)).map(([i, x]) => `${i}${x}`),
  fc.tuple(fc.constantFrom('-', '--', '/', '/-', 'a'), fc.integer({ min: 200, max: 40_000 })).map(([p, n]) => p + 'x'.repeat(n)),
  imageLike,
);

const POD_FIELDS = ['name', 'image', 'args', 'env.value', 'env.key', 'mounts.persistent.path', 'ports.0', 'registry', 'templateId', 'tags.value', 'gpu.id', 'dataCenterIds.0'] as const;
type PodField = (typeof POD_FIELDS)[number];

function withField(body: Record<string, unknown>, field: PodField, v: string): Record<string, unknown> {
  const b = structuredClone(body);
  switch (field) {
    case 'env.value':
      b.env = { K: v };
      break;
    case 'env.key':
      b.env = { [v]: 'x' };
      break;
    case 'mounts.persistent.path':
      b.mounts = { persistent: { size: 20, path: v } };
      break;
    case 'ports.0':
      b.ports = [v];
      break;
    case 'tags.value':
      b.tags = { t: v };
      break;
    case 'gpu.id':
      b.gpu = { id: v, count: 1 };
      break;
    case 'dataCenterIds.0':
      b.dataCenterIds = [v];
      break;
    default:
      b[field] = v;
  }
  return b;
}

const fieldsAndValues = fc.array(fc.tuple(fc.constantFrom(...POD_FIELDS), nasty), { minLength: 1, maxLength: 3 });

describe('fuzz: pod and template string fields', () => {
  test('POST /v2/pods: never a 5xx; refused → nothing stored; accepted → no user value in an option position', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fieldsAndValues, async (fvs) => {
        const body = fvs.reduce((b, [f, v]) => withField(b, f, v), gpuBody());
        const what = `POST /v2/pods ${JSON.stringify(body).slice(0, 300)}`;
        const a = await expectNoChangeIfRejected(cp, what, { caller }, () => send('POST', '/v2/pods', body), refused);
        checkAnswer(a, what);
        if (a.status === 201) {
          await checkBuiltArgv(a.json.id, what);
          expect((await send('DELETE', `/v2/pods/${a.json.id}`)).status).toBe(204);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test('PATCH /v2/pods/{id}: the same, for the fields an update takes', { timeout: 300_000 }, async () => {
    const patchable = POD_FIELDS.filter((f) => !['templateId', 'gpu.id', 'dataCenterIds.0'].includes(f));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...patchable), nasty), { minLength: 1, maxLength: 3 }), async (fvs) => {
        const body = fvs.reduce((b, [f, v]) => withField(b, f, v), {} as Record<string, unknown>);
        const what = `PATCH ${JSON.stringify(body).slice(0, 300)}`;
        const a = await expectNoChangeIfRejected(cp, what, { caller }, () => send('PATCH', `/v2/pods/${patchTarget}`, body), refused);
        checkAnswer(a, what);
        if (a.status === 200) await checkBuiltArgv(patchTarget, what);
      }),
      { numRuns: RUNS },
    );
  });

  test('POST /v2/templates, then a pod from the template: the same', { timeout: 300_000 }, async () => {
    const templateFields = ['name', 'image', 'args', 'env.value', 'env.key', 'mounts.persistent.path', 'ports.0', 'tags.value'] as const;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...templateFields), nasty), { minLength: 1, maxLength: 3 }), async (fvs) => {
        const body = fvs.reduce((b, [f, v]) => withField(b, f, v), { name: `t-${Date.now()}-${Math.random()}`, image: 'busybox' } as Record<string, unknown>);
        const what = `POST /v2/templates ${JSON.stringify(body).slice(0, 300)}`;
        const t = await expectNoChangeIfRejected(cp, what, { caller }, () => send('POST', '/v2/templates', body), refused);
        checkAnswer(t, what);
        if (t.status !== 201) return;
        const { image: _i, ...fromTemplate } = gpuBody({ templateId: t.json.id });
        const p = await expectNoChangeIfRejected(cp, `pod from ${what}`, { caller }, () => send('POST', '/v2/pods', fromTemplate), refused);
        checkAnswer(p, `pod from ${what}`);
        if (p.status === 201) {
          await checkBuiltArgv(p.json.id, `pod from ${what}`);
          expect((await send('DELETE', `/v2/pods/${p.json.id}`)).status).toBe(204);
        }
        expect((await send('DELETE', `/v2/templates/${t.json.id}`)).status).toBe(204);
      }),
      { numRuns: RUNS },
    );
  });

  test('GraphQL podFindAndDeployOnDemand: never INTERNAL; accepted → no user value in an option position', { timeout: 300_000 }, async () => {
    const deploy = `mutation Deploy($input: PodFindAndDeployOnDemandInput) { podFindAndDeployOnDemand(input: $input) { id } }`;
    const gqlFields = ['name', 'imageName', 'dockerArgs', 'volumeMountPath', 'ports', 'envValue', 'envKey'] as const;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...gqlFields), nasty), { minLength: 1, maxLength: 3 }), async (fvs) => {
        const input: Record<string, unknown> = { name: `gql-${Date.now()}`, imageName: 'busybox', gpuTypeId: H100, cloudType: 'SECURE', volumeInGb: 20, volumeMountPath: '/w' };
        for (const [f, v] of fvs) {
          if (f === 'envValue') input.env = [{ key: 'K', value: v }];
          else if (f === 'envKey') input.env = [{ key: v, value: 'x' }];
          else input[f] = v;
        }
        const what = `podFindAndDeployOnDemand ${JSON.stringify(input).slice(0, 300)}`;
        const r = await expectNoChangeIfRejected(cp, what, { caller }, () => runpodctl(cp.url, { key: user.key }, deploy, { input }), (x) => !x.data?.podFindAndDeployOnDemand?.id);
        expect(r.status, what).toBeLessThan(500);
        const code = r.errors?.[0]?.extensions?.code;
        expect(code, `${what} → ${JSON.stringify(r.errors)}`).not.toBe('INTERNAL');
        const id = r.data?.podFindAndDeployOnDemand?.id as string | undefined;
        if (id) {
          await checkBuiltArgv(id, what);
          expect((await send('DELETE', `/v2/pods/${id}`)).status).toBe(204);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
