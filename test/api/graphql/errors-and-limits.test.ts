// The error contract of /graphql: 401 without a key, read keys cannot mutate, REST/GraphQL parity
// (one pod model, one set of rules: the same bad input is refused with the same code and the same
// `errors` list), depth and alias limits, literals and variables, and never a 500 for bad input.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_ALIASES, MAX_DEPTH } from '../../../api/graphql/index.ts';
import { globalNetworkSettings } from '../../../model/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { principalFor, python, raw, runpodctl, type Auth } from './gql-client.ts';
import { CREATE_POD } from './runpodctl-texts.ts';
import { sdkDocuments } from './runpod-python-client.ts';

const H100 = 'NVIDIA H100 80GB HBM3';

/** the problem+json body REST answers with */
type Problem = { code: string; detail: string; errors?: string[] };

let cp: TestControlPlane;
let auth: Auth;
let accountId: string;
/** runpod-python's own get_gpus and get_pod documents (built by the unmodified SDK) */
let QUERY_GPU_TYPES: string;
let generatePodQuery: (podId: string) => string;

beforeAll(async () => {
  const sdk = await sdkDocuments();
  QUERY_GPU_TYPES = sdk.QUERY_GPU_TYPES;
  generatePodQuery = sdk.podQuery;
  // dc-a outside the global network: a pod asking for it is refused by both surfaces alike
  cp = await startTestControlPlane({ config: { globalNetwork: globalNetworkSettings({ exclude: 'dc-a' }) } });
  await seedHosts(cp.services.store, [{ id: 'gpu', gpus: 8, dataCenterId: 'dc-a' }, { id: 'cpu', gpus: 0, dataCenterId: 'dc-a' }]);
  const acct = await cp.newAccount('read_write');
  auth = { key: acct.key };
  accountId = acct.accountId;
});
afterAll(async () => cp?.close());

describe('authentication and scope', () => {
  test('no key, a wrong key and a malformed header are HTTP 401 (runpod-python raises AuthenticationError on 401)', async () => {
    for (const a of [{ key: null }, { key: 'gf_not_a_real_key_000000' }, { key: 'gf_not_a_real_key_000000', via: 'query' as const }]) {
      const r = await python(cp.url, a, QUERY_GPU_TYPES);
      expect(r.status).toBe(401);
      expect(r.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(r.data).toBeUndefined();
    }
    const res = await fetch(`${cp.url}/graphql`, { method: 'POST', headers: { authorization: 'Basic abc', 'content-type': 'application/json' }, body: '{"query":"{ myself { id } }"}' });
    expect(res.status).toBe(401);
    // the request guard counted it: rate-limit headers on the error too
    expect(res.headers.get('ratelimit-policy')).toBeTruthy();
  });

  test('a read key may query but not mutate: FORBIDDEN, and nothing is created', async () => {
    const reader = await cp.newAccount('read');
    const q = await python(cp.url, { key: reader.key }, '{ myself { id pods { id } } }');
    expect(q.errors).toBeUndefined();
    expect(q.data.myself.pods).toEqual([]);
    const m = await runpodctl(cp.url, { key: reader.key }, CREATE_POD, { input: { name: 'nope', imageName: 'img', gpuTypeId: H100 } });
    expect(m.status).toBe(200);
    expect(m.data).toEqual({ podFindAndDeployOnDemand: null });
    expect(m.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' }, message: expect.stringContaining('read_write') });
    expect(await cp.services.store.count('pods', { accountId: reader.accountId })).toBe(0);
  });

  test('GET /graphql is not served (405), so no mutation can ride a GET', async () => {
    const res = await fetch(`${cp.url}/graphql?query=${encodeURIComponent('{ myself { id } }')}`, { headers: { authorization: `Bearer ${auth.key}` } });
    expect(res.status).toBe(405);
  });
});

describe('REST and GraphQL are one pod model', () => {
  const gql = (input: Record<string, unknown>) => runpodctl(cp.url, auth, CREATE_POD, { input });
  const restCreate = (body: Record<string, unknown>) => cp.api('/v2/pods', { method: 'POST', json: body, key: auth.key });

  const cases: { name: string; rest: Record<string, unknown>; gql: Record<string, unknown>; code: string }[] = [
    { name: 'container disk 0', rest: { name: 'd', image: 'img', disk: 0, gpu: { id: H100 } }, gql: { name: 'd', imageName: 'img', containerDiskInGb: 0, gpuTypeId: H100 }, code: 'VALIDATION_FAILED' },
    { name: 'unknown GPU type', rest: { name: 'g', image: 'img', gpu: { id: 'NVIDIA Z9000' } }, gql: { name: 'g', imageName: 'img', gpuTypeId: 'NVIDIA Z9000' }, code: 'VALIDATION_FAILED' },
    { name: 'port out of range', rest: { name: 'p', image: 'img', ports: ['99999/http'], gpu: { id: H100 } }, gql: { name: 'p', imageName: 'img', ports: '99999/http', gpuTypeId: H100 }, code: 'VALIDATION_FAILED' },
    { name: 'bad env name', rest: { name: 'e', image: 'img', env: { '1BAD': 'x' }, gpu: { id: H100 } }, gql: { name: 'e', imageName: 'img', env: [{ key: '1BAD', value: 'x' }], gpuTypeId: H100 }, code: 'VALIDATION_FAILED' },
    { name: 'volume below 10 GB', rest: { name: 'v', image: 'img', mounts: { persistent: { size: 5, path: '/workspace' } }, gpu: { id: H100 } }, gql: { name: 'v', imageName: 'img', volumeInGb: 5, volumeMountPath: '/workspace', gpuTypeId: H100 }, code: 'VALIDATION_FAILED' },
    {
      name: 'persistent and network mounts together',
      rest: { name: 'm', image: 'img', mounts: { persistent: { size: 20, path: '/workspace' }, network: [{ volumeId: 'vol_x', path: '/workspace' }] }, gpu: { id: H100 } },
      gql: { name: 'm', imageName: 'img', volumeInGb: 20, networkVolumeId: 'vol_x', gpuTypeId: H100 },
      code: 'BAD_REQUEST',
    },
    { name: 'global networking where no data center is in the global network', rest: { name: 'n', image: 'img', globalNetworking: true, gpu: { id: H100 } }, gql: { name: 'n', imageName: 'img', globalNetwork: true, gpuTypeId: H100 }, code: 'BAD_REQUEST' },
    { name: 'more GPUs than any host has', rest: { name: 'c', image: 'img', gpu: { id: H100, count: 9 } }, gql: { name: 'c', imageName: 'img', gpuTypeId: H100, gpuCount: 9 }, code: 'PLACEMENT_IMPOSSIBLE' },
    { name: 'unknown network volume', rest: { name: 'u', image: 'img', mounts: { network: [{ volumeId: 'vol_nope', path: '/workspace' }] }, gpu: { id: H100 } }, gql: { name: 'u', imageName: 'img', networkVolumeId: 'vol_nope', gpuTypeId: H100 }, code: 'VALIDATION_FAILED' },
  ];

  test.each(cases)('$name: same code and errors from REST and GraphQL, nothing stored', async (c) => {
    const before = await cp.services.store.count('pods', { accountId });
    const res = await restCreate(c.rest);
    const problem = (await res.json()) as Problem;
    expect(problem.code).toBe(c.code);
    const r = await gql(c.gql);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ podFindAndDeployOnDemand: null });
    expect(r.errors?.[0]?.extensions).toEqual({ code: c.code, ...(problem.errors ? { errors: problem.errors } : {}) });
    expect(r.errors?.[0]?.message).toBe(problem.detail);
    expect(await cp.services.store.count('pods', { accountId })).toBe(before);
  });

  test('CPU flavors: a vCPU count the flavor does not offer is refused by both', async () => {
    const res = await restCreate({ name: 'cpu', image: 'img', cpu: { id: 'cpu3c', vcpuCount: 3, memory: 4 } });
    const problem = (await res.json()) as Problem;
    const r = await python(cp.url, auth, `mutation { deployCpuPod(input: {name: "cpu", imageName: "img", instanceId: "cpu3c-3-4"}) { id } }`);
    expect(r.errors?.[0]?.extensions).toEqual({ code: problem.code, errors: problem.errors });
    const malformed = await python(cp.url, auth, `mutation { deployCpuPod(input: {name: "cpu", imageName: "img", instanceId: "large"}) { id } }`);
    expect(malformed.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });

  test('a duplicate name is CONFLICT either way, and a pod made by GraphQL is listed by REST', async () => {
    const made = await gql({ name: 'twin', imageName: 'img', gpuTypeId: H100, cloudType: 'ALL' });
    expect(made.errors).toBeUndefined();
    const res = await restCreate({ name: 'twin', image: 'img', gpu: { id: H100 } });
    expect(((await res.json()) as Problem).code).toBe('CONFLICT');
    expect((await gql({ name: 'twin', imageName: 'img', gpuTypeId: H100 })).errors?.[0]?.extensions?.code).toBe('CONFLICT');
    const list = (await (await cp.api('/v2/pods?name=twin', { key: auth.key })).json()) as { pods: { id: string }[] };
    expect(list.pods.map((p: { id: string }) => p.id)).toEqual([made.data.podFindAndDeployOnDemand.id]);
  });

  test('another account cannot see the pod: NOT_FOUND, as REST answers 404', async () => {
    const mine = await gql({ name: 'private', imageName: 'img', gpuTypeId: H100 });
    const other = await cp.newAccount('read_write');
    const r = await python(cp.url, { key: other.key }, generatePodQuery(mine.data.podFindAndDeployOnDemand.id));
    expect(r.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await cp.api(`/v2/pods/${mine.data.podFindAndDeployOnDemand.id}`, { key: other.key })).status).toBe(404);
  });
});

describe('documents: literals, variables, malformed requests', () => {
  test('inline literals: escaped strings, null, enums, lists of objects', async () => {
    const text = `mutation { podFindAndDeployOnDemand(input: { name: "say \\"hi\\"\\t", imageName: "img", cloudType: SECURE, dataCenterId: null, gpuTypeId: "${H100}", env: [{ key: "MSG", value: "a \\"b\\"\\n" }, { key: "EMPTY", value: null }], ports: "8888/http, 22/tcp" }) { id name env ports } }`;
    const r = await python(cp.url, auth, text);
    expect(r.errors).toBeUndefined();
    expect(r.data.podFindAndDeployOnDemand).toMatchObject({ name: 'say "hi"\t', env: ['MSG=a "b"\n', 'EMPTY='], ports: '8888/http,22/tcp' });
  });

  test('bad documents and bad variables are BAD_REQUEST errors, never a 500', async () => {
    const bad: [string, Record<string, unknown> | undefined][] = [
      ['{ myself { id ', undefined],
      ['{ nope }', undefined],
      ['{ pod(input: {podId: 5}) { id } }', undefined],
      ['mutation { podFindAndDeployOnDemand(input: {cloudType: "ALL"}) { id } }', undefined],
      ['query Q($id: String!) { pod(input: {podId: $id}) { id } }', { id: 5 }],
      ['query Q($id: String!) { pod(input: {podId: $id}) { id } }', {}],
      ['query A { myself { id } } query B { myself { id } }', {}],
    ];
    for (const [query, variables] of bad) {
      const r = await runpodctl(cp.url, auth, query, variables);
      expect(r.status, query).toBe(200);
      expect(r.errors?.[0]?.extensions?.code, query).toBe('BAD_REQUEST');
      expect(r.errors?.[0]?.message, query).toBeTruthy();
    }
  });

  test('a body over 1 MiB is HTTP 413 with a GraphQL-shaped body', async () => {
    const r = await raw(cp.url, auth, { query: `{ myself { id } } # ${'x'.repeat(1_100_000)}` });
    expect(r.status).toBe(413);
    expect(r.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  test('bodies that are not a GraphQL request are HTTP 400 with a GraphQL-shaped body', async () => {
    for (const body of ['{not json', [{ query: '{ myself { id } }' }], { variables: {} }, { query: '{ myself { id } }', variables: 'x' }]) {
      const r = await raw(cp.url, auth, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(body)).toMatch(/^(BAD_REQUEST|INVALID_JSON)$/);
    }
  });

  test('flashBootType accepts the enum literal and a string; anything else is refused', async () => {
    const tpl = await cp.services.templates.create(principalFor(accountId), { name: 'fb', image: 'img', serverless: true });
    const mk = (fb: string, name: string) => `mutation { saveEndpoint(input: { ${fb} name: "${name}", templateId: "${tpl.id}", gpuIds: "AMPERE_80" }) { flashBootType } }`;
    expect((await python(cp.url, auth, mk('flashBootType: FLASHBOOT,', 'a'))).data.saveEndpoint.flashBootType).toBe('FLASHBOOT');
    expect((await python(cp.url, auth, mk('flashBootType: "OFF",', 'b'))).data.saveEndpoint.flashBootType).toBe('OFF');
    expect((await python(cp.url, auth, mk('flashBootType: SOMETIMES,', 'c'))).errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });
});

describe('limits', () => {
  const nest = (levels: number) => {
    // __schema(1) types(2) fields(3) type(4) then ofType… ; the innermost field is `name`
    const inner = levels - 5;
    return `{ __schema { types { fields { type { ${'ofType { '.repeat(inner)}name${' }'.repeat(inner)} } } } } }`;
  };

  test(`depth: ${MAX_DEPTH} levels run, ${MAX_DEPTH + 1} are refused before anything runs`, async () => {
    expect((await python(cp.url, auth, nest(MAX_DEPTH))).errors).toBeUndefined();
    const r = await python(cp.url, auth, nest(MAX_DEPTH + 1));
    expect(r.status).toBe(200);
    expect(r.data).toBeUndefined();
    expect(r.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST' }, message: `The operation nests fields ${MAX_DEPTH + 1} levels deep; at most ${MAX_DEPTH} are allowed.` });
  });

  test('depth through fragments counts the levels inside the fragment', async () => {
    const doc = `query Deep { __schema { ...T } } fragment T on __Schema { types { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } }`;
    expect((await python(cp.url, auth, doc)).errors?.[0]?.message).toContain('Operation Deep nests fields 9 levels deep');
  });

  test(`aliases: ${MAX_ALIASES} run, ${MAX_ALIASES + 1} are refused`, async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: myself { id }`).join(' ')} }`;
    const ok = await python(cp.url, auth, aliases(MAX_ALIASES));
    expect(ok.errors).toBeUndefined();
    expect(Object.keys(ok.data)).toHaveLength(MAX_ALIASES);
    const r = await python(cp.url, auth, aliases(MAX_ALIASES + 1));
    expect(r.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST' }, message: `The document uses ${MAX_ALIASES + 1} aliases; at most ${MAX_ALIASES} are allowed per request.` });
  });

  test('an oversized document is refused by the parser token cap', async () => {
    const r = await python(cp.url, auth, `{ ${'__typename '.repeat(20_000)} }`);
    expect(r.status).toBe(200);
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });
});

describe('rate limits', () => {
  test('/graphql counts against the same per-account windows: 429 with Retry-After and a GraphQL-shaped body', async () => {
    const limited = await startTestControlPlane({ rateLimits: 'minute=3' });
    try {
      const { key } = await limited.newAccount('read');
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await python(limited.url, { key }, QUERY_GPU_TYPES));
      expect(answers.slice(0, 3).map((a) => a.status)).toEqual([200, 200, 200]);
      const last = answers[3]!;
      expect(last.status).toBe(429);
      expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(last.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    } finally {
      await limited.close();
    }
  });
});

describe('fuzz', () => {
  const fields = ['name', 'imageName', 'cloudType', 'gpuTypeId', 'gpuCount', 'containerDiskInGb', 'volumeInGb', 'volumeMountPath', 'networkVolumeId', 'templateId', 'dockerArgs', 'ports', 'env', 'dataCenterId', 'minVcpuCount', 'minMemoryInGb', 'allowedCudaVersions', 'minCudaVersion', 'containerRegistryAuthId', 'globalNetwork', 'instanceId'];
  const value = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.integer({ min: -3, max: 100 }),
    fc.constantFrom('ALL', 'SECURE', H100, '8888/http,22/tcp', '12.4', 'cpu3c-2-4', '/workspace', '', 'runpod-ubuntu'),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(fc.record({ key: fc.string({ maxLength: 6 }), value: fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null)) }), fc.string({ maxLength: 6 }), fc.constant(null)), { maxLength: 3 }),
  );
  const input = fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: 10 });

  test('random pod inputs (GPU and CPU mutations) never produce an INTERNAL error or a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(input, fc.boolean(), async (i, cpu) => {
        const query = cpu
          ? 'mutation M($input: DeployCpuPodInput) { deployCpuPod(input: $input) { id env ports machine { podHostId } } }'
          : 'mutation M($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { id env ports vcpuCount memoryInGb } }';
        const { instanceId, gpuTypeId, ...rest } = i;
        const r = await runpodctl(cp.url, auth, query, { input: cpu ? { ...rest, instanceId } : { ...rest, gpuTypeId } });
        expect(r.status).toBe(200);
        for (const e of r.errors ?? []) expect(e.extensions?.code, JSON.stringify(e)).not.toBe('INTERNAL');
        if (!r.errors) expect(r.data[cpu ? 'deployCpuPod' : 'podFindAndDeployOnDemand'].id).toMatch(/^[a-z0-9]{14}$/);
      }),
      { numRuns: 150 },
    );
  });
});
