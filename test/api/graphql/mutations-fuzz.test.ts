// Property test over every GraphQL mutation the schema declares (read from api/graphql/schema.ts, so a
// mutation added later is fuzzed too), plus names it does not declare (podRentInterruptable, …):
// arguments generated from the argument types (mostly well typed, so they reach the resolvers;
// sometimes anything at all), sent as variables (runpodctl) or as inline literals (runpod-python),
// with ids of the caller's own records and of another account's. Whatever arrives: never a 5xx and
// never INTERNAL; a rejected mutation changes nothing the caller can see (visible-state.ts), and no
// mutation, accepted or not, changes the other account's records.
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { typeDefs } from '../../../api/graphql/schema.ts';
import type { TestControlPlane } from '../../harness/control-plane.ts';
import { DC, H100, RTX4090, cpuBody, gpuBody, keyFor, startPodsControlPlane } from '../pods-helpers.ts';
import { expectNoChangeIfRejected, type Observer } from '../visible-state.ts';
import { runpodctl, type GqlReply } from './gql-client.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const schema = buildSchema(typeDefs);
const mutations = Object.values(schema.getMutationType()!.getFields());
/** names a client may send that this schema does not have: refused by validation, nothing runs */
const UNDECLARED = ['podRentInterruptable', 'podEditJob', 'podReset', 'createNetworkVolume'];

let cp: TestControlPlane;
interface Account {
  key: string;
  observer: Observer;
  /** what `@name` tokens in generated values stand for: ids (and names) of this account's records */
  refs: Record<string, string>;
}
let me: Account;
let other: Account;

async function rest(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await cp.api(path, { method, key, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function created(key: string, path: string, json: unknown): Promise<any> {
  const r = await rest(key, 'POST', path, json);
  expect(r.status, `POST ${path} ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
}

let seq = 0;
/** the records every fuzz run can aim at; recreated when an accepted mutation removed one */
async function ensureFixtures(a: { key: string; refs: Record<string, string> }, tag: string): Promise<void> {
  const exists = async (path: string) => (await rest(a.key, 'GET', path)).status === 200;
  if (!a.refs.template || !(await exists(`/v2/templates/${a.refs.template}`))) {
    const t = await created(a.key, '/v2/templates', { name: `${tag}-tpl-${++seq}`, image: 'busybox:1.36' });
    a.refs.template = t.id;
    a.refs.templateName = t.name;
  }
  // the endpoint's own template: the one above stays free to delete
  if (!a.refs.workerTemplate || !(await exists(`/v2/templates/${a.refs.workerTemplate}`)))
    a.refs.workerTemplate = (await created(a.key, '/v2/templates', { name: `${tag}-worker-${++seq}`, image: 'busybox:1.36', serverless: true })).id;
  if (!a.refs.endpoint || !(await exists(`/v1/endpoints/${a.refs.endpoint}`)))
    a.refs.endpoint = (await created(a.key, '/v1/endpoints', { name: `${tag}-ep-${++seq}`, templateId: a.refs.workerTemplate, gpuTypeIds: [H100] })).id;
  if (!a.refs.registry || !(await exists(`/v2/registries/${a.refs.registry}`))) {
    const r = await created(a.key, '/v2/registries', { name: `${tag}-reg-${++seq}`, username: 'u', password: 'p4ssword' });
    a.refs.registry = r.id;
    a.refs.registryName = r.name;
  }
  if (!a.refs.volume || !(await exists(`/v2/network-volumes/${a.refs.volume}`)))
    a.refs.volume = (await created(a.key, '/v2/network-volumes', { name: `${tag}-vol-${++seq}`, size: 10, dataCenterId: DC })).id;
  for (const [ref, body] of [
    ['gpuPod', () => gpuBody()],
    ['cpuPod', () => cpuBody()],
  ] as const) {
    const p = a.refs[ref] ? await rest(a.key, 'GET', `/v2/pods/${a.refs[ref]}`) : null;
    if (!p || p.status !== 200 || p.body.status === 'TERMINATED') a.refs[ref] = (await created(a.key, '/v2/pods', body())).id;
  }
}

/** after an accepted mutation: what it created goes (the fleet and the lists stay small), fixtures stay */
async function tidy(a: Account): Promise<void> {
  const mine = new Set(Object.values(a.refs));
  for (const p of (await rest(a.key, 'GET', '/v2/pods')).body.pods) if (!mine.has(p.id)) await rest(a.key, 'DELETE', `/v2/pods/${p.id}`);
  for (const e of (await rest(a.key, 'GET', '/v1/endpoints')).body) if (!mine.has(e.id)) await rest(a.key, 'DELETE', `/v1/endpoints/${e.id}`);
  for (const t of (await rest(a.key, 'GET', '/v2/templates')).body.templates) if (!mine.has(t.id)) await rest(a.key, 'DELETE', `/v2/templates/${t.id}`);
  for (const r of (await rest(a.key, 'GET', '/v2/registries')).body.registries) if (!mine.has(r.id)) await rest(a.key, 'DELETE', `/v2/registries/${r.id}`);
  await ensureFixtures(a, 'me');
}

beforeAll(async () => {
  cp = await startPodsControlPlane({ rateLimits: 'minute=10000000,hour=10000000,day=10000000' });
  const account = async (tag: string): Promise<Account> => {
    const { accountId, key } = await cp.newAccount('read_write', 1000);
    const a = { key, observer: { key, adminKey: await keyFor(cp, accountId, 'admin') }, refs: {} };
    await ensureFixtures(a, tag);
    return a;
  };
  me = await account('me');
  other = await account('other');
});
afterAll(async () => cp?.close());

// ---- values from argument types ------------------------------------------------------------------

// `@name` tokens, resolved when a run starts (fixtures can be recreated between runs): resolveRefs
const REF_NAMES = ['gpuPod', 'cpuPod', 'template', 'templateName', 'workerTemplate', 'endpoint', 'registry', 'registryName', 'volume'];
const refToken = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('@unique', ...REF_NAMES.map((n) => `@${n}`)) },
  { weight: 1, arbitrary: fc.constantFrom(...REF_NAMES.map((n) => `@other.${n}`)) },
);
const interesting = fc.constantFrom(
  '', ' ', 'x', 'busybox:1.36', 'busybox', H100, RTX4090, 'ADA_24', 'AMPERE_80', 'ADA_24,AMPERE_80', DC, `${DC},dc-test-2`, 'cpu3c', 'cpu3c-2-4',
  '22/tcp,8888/http', '8888/http', '/workspace', '12.4', '12.4,12.5', '99.0', 'FLASHBOOT', 'OFF', 'QB', 'LB', 'SECURE', 'ALL',
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGsTQvF4yY3v1oH8n3sJ6bqX7hHkW2bF3bY0b1yZ3b0n me@host', 'not a key', '--privileged', '-v', '/:/host',
  'no-such-id', 'x'.repeat(300),
);
const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: refToken },
  { weight: 4, arbitrary: interesting },
  { weight: 2, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 16 }) },
);
const anyInt = fc.oneof(
  fc.constantFrom(0, 1, 2, 4, 5, 8, 10, 20, 50, 100, 1000, -1, 2 ** 31 - 1, -(2 ** 31)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
);
const anyFloat = fc.oneof(fc.constantFrom(0, 0.5, 1, 3.99, -1, 1e308), fc.double({ noNaN: true, noDefaultInfinity: true }));
const wrongTyped = fc.jsonValue({ maxDepth: 2 });

/** a value for `type`: well typed most of the time, anything JSON can carry now and then */
function valueOf(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const typed = wellTyped(type, depth);
  return fc.oneof({ weight: 12, arbitrary: typed }, { weight: 1, arbitrary: wrongTyped });
}

function wellTyped(type: GraphQLInputType, depth: number): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return valueOf(type.ofType, depth);
  const orNull = (a: fc.Arbitrary<unknown>) => fc.oneof({ weight: 8, arbitrary: a }, { weight: 1, arbitrary: fc.constant(null) });
  if (isListType(type)) return orNull(fc.array(valueOf(type.ofType, depth + 1), { maxLength: 3 }));
  if (isEnumType(type)) return orNull(fc.constantFrom(...type.getValues().map((v) => v.name)));
  if (isInputObjectType(type)) {
    if (depth > 3) return fc.constant(null);
    const fields = Object.values(type.getFields());
    const model = Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type, depth + 1)]));
    return orNull(fc.record(model, { requiredKeys: fields.filter((f) => isNonNullType(f.type)).map((f) => f.name) }));
  }
  if (isScalarType(type))
    switch (type.name) {
      case 'Int':
        return orNull(anyInt);
      case 'Float':
        return orNull(anyFloat);
      case 'Boolean':
        return orNull(fc.boolean());
      case 'String':
      case 'ID':
        return orNull(anyString);
      default: // custom scalars (FlashBootType)
        return orNull(fc.oneof(anyString, wrongTyped));
    }
  return wrongTyped;
}

/** `@name` → the caller's id, `@other.name` → the other account's, `@unique` → a name never used */
function resolveRefs(v: unknown): unknown {
  if (v === '@unique') return `fz-${process.pid}-${++seq}`;
  if (typeof v === 'string' && v.startsWith('@')) {
    const [owner, name] = v.startsWith('@other.') ? [other, v.slice(7)] : [me, v.slice(1)];
    return owner.refs[name] ?? v;
  }
  if (Array.isArray(v)) return v.map(resolveRefs);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveRefs(x)]));
  return v;
}

/**
 * An inline GraphQL literal, as runpod-python writes its queries: a string in an enum (or custom
 * scalar) position that is a GraphQL name is written bare, as an enum value; any other string quoted.
 */
function literal(v: unknown, type?: GraphQLInputType): string {
  const t = type && isNonNullType(type) ? type.ofType : type;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') {
    const bareable = t !== undefined && (isEnumType(t) || (isScalarType(t) && !['String', 'ID'].includes(t.name)));
    return bareable && /^[_A-Za-z][_0-9A-Za-z]*$/.test(v) && !['true', 'false', 'null'].includes(v) ? v : JSON.stringify(v);
  }
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => literal(x, t && isListType(t) ? t.ofType : undefined)).join(', ')}]`;
  const fields = t && isInputObjectType(t) ? t.getFields() : {};
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${k}: ${literal(x, fields[k]?.type)}`)
    .join(', ')}}`;
}

interface Call {
  field: string;
  args: Record<string, unknown>;
  via: 'variables' | 'literals';
  /** the argument definitions (none for an undeclared mutation) */
  defs: readonly GraphQLArgument[];
}

function selectionOf(f: GraphQLField<unknown, unknown> | undefined): string {
  const t = f && getNamedType(f.type);
  if (t && isObjectType(t)) return 'id' in t.getFields() ? ' { id }' : ' { __typename }';
  return '';
}

function document(c: Call): { query: string; variables: Record<string, unknown> } {
  const f = mutations.find((m) => m.name === c.field);
  const present = Object.keys(c.args);
  if (c.via === 'literals' || !f) {
    const args = present.map((k) => `${k}: ${literal(c.args[k], c.defs.find((d) => d.name === k)?.type)}`).join(', ');
    return { query: `mutation { ${c.field}${args ? `(${args})` : ''}${selectionOf(f)} }`, variables: {} };
  }
  const decl = present.map((k) => `$${k}: ${String(c.defs.find((d) => d.name === k)!.type)}`).join(', ');
  const args = present.map((k) => `${k}: $${k}`).join(', ');
  return { query: `mutation Fuzz${decl ? `(${decl})` : ''} { ${c.field}${args ? `(${args})` : ''}${selectionOf(f)} }`, variables: c.args };
}

const declaredCall: fc.Arbitrary<Call> = fc.constantFrom(...mutations).chain((m) =>
  fc.record({
    field: fc.constant(m.name),
    args: fc.record(Object.fromEntries(m.args.map((a) => [a.name, valueOf(a.type)])), {
      requiredKeys: m.args.filter((a) => isNonNullType(a.type)).map((a) => a.name),
    }) as fc.Arbitrary<Record<string, unknown>>,
    via: fc.constantFrom('variables' as const, 'literals' as const),
    defs: fc.constant(m.args),
  }),
);

// inputs the public clients send, each a valid request; a few field changes make them the near
// misses that get furthest before a refusal (where a half-done write would hide)
const VALID: Record<string, Record<string, unknown>[]> = {
  podFindAndDeployOnDemand: [
    { input: { name: '@unique', imageName: 'busybox:1.36', gpuTypeId: H100, cloudType: 'SECURE', gpuCount: 1, containerDiskInGb: 5, volumeInGb: 20, volumeMountPath: '/workspace', ports: '8888/http', env: [{ key: 'A', value: 'b' }] } },
    { input: { name: '@unique', templateId: '@template', gpuTypeId: H100, gpuCount: 1, networkVolumeId: '@volume', dataCenterId: DC } },
  ],
  deployCpuPod: [{ input: { name: '@unique', imageName: 'busybox:1.36', instanceId: 'cpu3c-2-4', containerDiskInGb: 5, ports: '22/tcp' } }],
  podStop: [{ input: { podId: '@gpuPod' } }, { input: { podId: '@cpuPod' } }],
  podResume: [{ input: { podId: '@gpuPod', gpuCount: 1 } }, { input: { podId: '@cpuPod' } }],
  podTerminate: [{ input: { podId: '@cpuPod' } }],
  saveTemplate: [
    { input: { name: '@unique', imageName: 'busybox:1.36', containerDiskInGb: 5, volumeInGb: 10, volumeMountPath: '/w', ports: '8888/http', env: [{ key: 'A', value: 'b' }], dockerArgs: 'sleep 1', isServerless: false } },
    { input: { id: '@template', name: '@templateName', imageName: 'busybox:1.36', containerDiskInGb: 6, volumeInGb: 0, ports: '', env: [], isServerless: true } },
  ],
  deleteTemplate: [{ templateName: '@templateName' }, { templateId: '@template' }],
  saveEndpoint: [
    { input: { name: '@unique', templateId: '@workerTemplate', gpuIds: 'ADA_24', workersMin: 0, workersMax: 2, idleTimeout: 5, scalerType: 'QUEUE_DELAY', scalerValue: 4 } },
    { input: { name: '@unique', template: { name: '@unique', imageName: 'busybox:1.36', containerDiskInGb: 5, env: [{ key: 'A', value: 'b' }] }, gpuIds: 'ADA_24', locations: DC, flashBootType: 'FLASHBOOT' } },
    { input: { name: '@unique', template: { imageName: 'busybox:1.36', dockerArgs: 'sleep 1' }, gpuIds: 'ADA_24,AMPERE_80', workersMax: 1, env: [{ key: 'B', value: 'c' }] } },
    { input: { id: '@endpoint', name: '@unique', templateId: '@workerTemplate', gpuIds: 'AMPERE_80', networkVolumeId: '@volume', locations: DC } },
  ],
  updateEndpointTemplate: [{ input: { endpointId: '@endpoint', templateId: '@workerTemplate' } }],
  deleteEndpoint: [{ id: '@endpoint' }],
  saveRegistryAuth: [{ input: { name: '@unique', username: 'u', password: 'p4ssword' } }],
  updateRegistryAuth: [{ input: { id: '@registry', username: 'u2', password: 'p4ssword2' } }],
  deleteRegistryAuth: [{ registryAuthId: '@registry' }],
  updateUserSettings: [{ input: { pubKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGsTQvF4yY3v1oH8n3sJ6bqX7hHkW2bF3bY0b1yZ3b0n me@host' } }],
};

/** input-object fields of `type` by dotted path ("input.template.env"), for the changes below */
function fieldPaths(args: readonly GraphQLArgument[]): { path: string[]; type: GraphQLInputType }[] {
  const out: { path: string[]; type: GraphQLInputType }[] = [];
  const walk = (path: string[], type: GraphQLInputType, depth: number) => {
    out.push({ path, type });
    const t = getNamedType(type);
    if (depth < 2 && isInputObjectType(t)) for (const f of Object.values(t.getFields())) walk([...path, f.name], f.type, depth + 1);
  };
  for (const a of args) walk([a.name], a.type, 0);
  return out;
}

function change(base: Record<string, unknown>, edits: { path: string[]; op: 'set' | 'delete'; value: unknown }[]): Record<string, unknown> {
  const out = structuredClone(base);
  for (const e of edits) {
    let cur = out as Record<string, unknown>;
    for (const p of e.path.slice(0, -1)) {
      if (typeof cur[p] !== 'object' || cur[p] === null || Array.isArray(cur[p])) cur[p] = {};
      cur = cur[p] as Record<string, unknown>;
    }
    const last = e.path.at(-1)!;
    if (e.op === 'delete') delete cur[last];
    else cur[last] = e.value;
  }
  return out;
}

// each valid input is as likely as any other, so a mutation with more shapes gets more near misses
const nearValidCall: fc.Arbitrary<Call> = fc.constantFrom(...mutations.flatMap((m) => (VALID[m.name] ?? []).map(() => m))).chain((m) => {
  const paths = fieldPaths(m.args);
  const edit = fc.constantFrom(...paths).chain((p) => fc.record({ path: fc.constant(p.path), op: fc.constantFrom('set' as const, 'delete' as const), value: valueOf(p.type) }));
  return fc.record({
    field: fc.constant(m.name),
    args: fc.tuple(fc.constantFrom(...VALID[m.name]!), fc.array(edit, { minLength: 1, maxLength: 2 })).map(([b, e]) => change(b, e)),
    via: fc.constantFrom('variables' as const, 'literals' as const),
    defs: fc.constant(m.args),
  });
});

const undeclaredCall: fc.Arbitrary<Call> = fc.record({
  field: fc.constantFrom(...UNDECLARED),
  args: fc.record({ input: fc.oneof(valueOf(schema.getType('PodFindAndDeployOnDemandInput') as GraphQLInputType), wrongTyped) }),
  via: fc.constant('literals' as const),
  defs: fc.constant([]),
});

// ---- the property --------------------------------------------------------------------------------

function checkReply(r: GqlReply, what: string): void {
  expect(r.status, what).toBeLessThan(500);
  for (const e of r.errors ?? []) {
    expect(typeof e.extensions?.code, `${what}: ${JSON.stringify(e)}`).toBe('string');
    expect(e.extensions?.code, `${what}: ${JSON.stringify(e)}`).not.toBe('INTERNAL');
  }
}

describe('fuzz: GraphQL mutations', () => {
  test('the valid inputs the near misses start from are accepted as they are', async () => {
    expect(Object.keys(VALID).filter((n) => !mutations.some((m) => m.name === n))).toEqual([]);
    for (const m of mutations.filter((x) => VALID[x.name]))
      for (const args of VALID[m.name]!) {
        const resolved = resolveRefs(args) as Record<string, any>;
        // a pod resumes from stopped
        if (m.name === 'podResume') expect((await rest(me.key, 'POST', `/v2/pods/${resolved.input.podId}/action`, { action: 'stop' })).status).toBe(200);
        const { query, variables } = document({ field: m.name, args: resolved, via: 'variables', defs: m.args });
        const r = await runpodctl(cp.url, { key: me.key }, query, variables);
        expect(r.errors, `${query} ${JSON.stringify(variables)}`).toBeUndefined();
        await tidy(me);
      }
  });

  test("every mutation, any arguments: never 5xx or INTERNAL; rejected → nothing the caller sees changes; another account's records never change", { timeout: 600_000 }, async () => {
    expect(mutations.map((m) => m.name)).toEqual(expect.arrayContaining(['podFindAndDeployOnDemand', 'saveTemplate', 'saveEndpoint', 'podStop', 'podResume', 'podTerminate', 'deleteTemplate']));
    let accepted = 0;
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 8, arbitrary: declaredCall }, { weight: 8, arbitrary: nearValidCall }, { weight: 1, arbitrary: undeclaredCall }), async (c) => {
        const call = { ...c, args: resolveRefs(c.args) as Record<string, unknown> };
        const { query, variables } = document(call);
        const what = `${query} ${JSON.stringify(variables)}`.slice(0, 1500);
        const r = await expectNoChangeIfRejected(
          cp,
          what,
          { caller: me.observer, others: [other.observer] },
          () => runpodctl(cp.url, { key: me.key }, query, variables),
          (x) => (x.errors?.length ?? 0) > 0,
        );
        checkReply(r, what);
        if (!mutations.some((m) => m.name === c.field)) expect(r.errors?.[0]?.extensions?.code, what).toBe('BAD_REQUEST');
        if ((r.errors?.length ?? 0) > 0) rejected++;
        else {
          accepted++;
          await tidy(me);
        }
      }),
      { numRuns: RUNS },
    );
    // the generator reaches the resolvers: some mutations go through, most are refused
    expect(accepted, `accepted ${accepted}, rejected ${rejected}`).toBeGreaterThan(RUNS / 50);
    expect(rejected).toBeGreaterThan(RUNS / 5);
  });
});
