// A public template's owner cannot change other tenants' workers (issue 18 item 4; docs/templates.md,
// "Public templates and pinning"): two accounts on a listening control plane. Bob's endpoints on
// Alice's public template keep the template as it was when Bob chose it, through REST v1, REST v2
// and GraphQL; Alice's edit rolls only her own endpoints; Bob takes the new template by naming
// templateId again; Bob never sees the template's env values. The upgrade pins records written before.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { pinEndpointsOfOthers, workerTemplate } from '../../core/endpoints/template-pins.ts';
import type { EndpointRecord } from '../../model/index.ts';

type J = Record<string, any>;
let cp: TestControlPlane;
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let tpl: J;

const json = async (r: Response) => (await r.json()) as J;
const rec = async (id: string) => (await cp.services.store.get('endpoints', id))!;
/** what the endpoint's next worker is built from (core/workers/worker-service.ts uses the same) */
const builds = async (id: string) => {
  const e = await rec(id);
  return workerTemplate(e, await cp.services.store.get('templates', e.templateId));
};
async function gql(key: string, query: string, variables: J = {}): Promise<J> {
  const res = await fetch(`${cp.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return json(res);
}
const SAVE = 'mutation S($input: EndpointInput!) { saveEndpoint(input: $input) { id templateId } }';
const endpointBody = (name: string) => ({ templateId: tpl.id, name, gpuTypeIds: ['ADA_24'], workersMin: 0, workersMax: 1 });

beforeAll(async () => {
  cp = await startTestControlPlane();
  alice = await cp.newAccount();
  bob = await cp.newAccount();
  tpl = await json(
    await cp.api('/v2/templates', { method: 'POST', key: alice.key, json: { name: 'shared-model', image: 'busybox:1.36', args: 'serve --v1', serverless: true, public: true, env: { MODEL_TOKEN: 'alice-secret' } } }),
  );
  expect(tpl.id).toBeDefined();
});
afterAll(() => cp?.close());

describe("a public template's owner edits it", () => {
  test("her edit rolls her own endpoints only; Bob's v1, v2 and GraphQL endpoints keep what they chose", async () => {
    const own = await json(await cp.api('/v1/endpoints', { method: 'POST', key: alice.key, json: endpointBody('alice-ep') }));
    const v1 = await json(await cp.api('/v1/endpoints', { method: 'POST', key: bob.key, json: endpointBody('bob-v1') }));
    const v2 = await json(await cp.api('/v2/serverless', { method: 'POST', key: bob.key, json: { name: 'bob-v2', type: 'QUEUE', templateId: tpl.id, gpu: { pools: ['ADA_24'] }, scaling: { type: 'QUEUE_DELAY', queueDelay: 4 } } }));
    const g = (await gql(bob.key, SAVE, { input: { name: 'bob-gql', templateId: tpl.id, gpuIds: 'ADA_24' } })).data.saveEndpoint;
    const bobs = [v1.id, v2.id, g.id] as string[];
    for (const id of bobs) expect((await rec(id)).templatePin).toMatchObject({ image: 'busybox:1.36', args: 'serve --v1', env: { MODEL_TOKEN: 'alice-secret' } });
    expect((await rec(own.id)).templatePin).toBeNull();
    const before = new Map<string, number>();
    for (const id of [own.id, ...bobs]) before.set(id, (await rec(id)).version);

    // Alice turns her template against its users: another command, and an env of her choosing
    const edit = await cp.api(`/v2/templates/${tpl.id}`, { method: 'PATCH', key: alice.key, json: { image: 'busybox:1.37', args: 'exfiltrate', env: { MODEL_TOKEN: 'x', EVIL: '1' } } });
    expect(edit.status).toBe(200);
    expect((await rec(own.id)).version).toBe(before.get(own.id)! + 1);
    expect((await builds(own.id))).toMatchObject({ image: 'busybox:1.37', args: 'exfiltrate' });
    for (const id of bobs) {
      expect((await rec(id)).version, id).toBe(before.get(id));
      expect(await builds(id), id).toMatchObject({ image: 'busybox:1.36', args: 'serve --v1', env: { MODEL_TOKEN: 'alice-secret' } });
    }
    // the v2 view shows what the endpoint runs
    expect(await json(await cp.api(`/v2/serverless/${v2.id}`, { key: bob.key }))).toMatchObject({ image: 'busybox:1.36', args: 'serve --v1' });
    // a change that does not name the template keeps the pin
    expect((await cp.api(`/v1/endpoints/${v1.id}`, { method: 'PATCH', key: bob.key, json: { workersMax: 2 } })).status).toBe(200);
    expect(await builds(v1.id)).toMatchObject({ image: 'busybox:1.36' });
    expect((await cp.api(`/v2/serverless/${v2.id}`, { method: 'PATCH', key: bob.key, json: { workers: { max: 2 } } })).status).toBe(200);
    expect(await builds(v2.id)).toMatchObject({ image: 'busybox:1.36' });
  });

  test('Bob takes the template as it is now by naming templateId: PATCH v1, PATCH v2, saveEndpoint and updateEndpointTemplate; his workers roll', async () => {
    const mk = async (name: string) => (await json(await cp.api('/v1/endpoints', { method: 'POST', key: bob.key, json: endpointBody(name) }))).id as string;
    const [a, b, c, d] = [await mk('re-v1'), await mk('re-v2'), await mk('re-gql'), await mk('re-move')];
    expect(await builds(a)).toMatchObject({ image: 'busybox:1.37' }); // chose it after the edit
    await cp.api(`/v2/templates/${tpl.id}`, { method: 'PATCH', key: alice.key, json: { image: 'busybox:1.38' } });
    const v0 = (await rec(a)).version;
    for (const id of [a, b, c, d]) expect(await builds(id)).toMatchObject({ image: 'busybox:1.37' });
    expect((await cp.api(`/v1/endpoints/${a}`, { method: 'PATCH', key: bob.key, json: { templateId: tpl.id } })).status).toBe(200);
    expect((await cp.api(`/v2/serverless/${b}`, { method: 'PATCH', key: bob.key, json: { templateId: tpl.id } })).status).toBe(200);
    expect((await gql(bob.key, SAVE, { input: { id: c, name: 're-gql', templateId: tpl.id, gpuIds: 'ADA_24' } })).data.saveEndpoint.id).toBe(c);
    const moved = await gql(bob.key, 'mutation M($input: UpdateEndpointTemplateInput) { updateEndpointTemplate(input: $input) { id templateId } }', { input: { endpointId: d, templateId: tpl.id } });
    expect(moved.data.updateEndpointTemplate).toEqual({ id: d, templateId: tpl.id });
    for (const id of [a, b, c, d]) expect(await builds(id), id).toMatchObject({ image: 'busybox:1.38' });
    expect((await rec(a)).version).toBe(v0 + 1);
    // naming it again with nothing new changes nothing: the workers stay
    expect((await cp.api(`/v1/endpoints/${a}`, { method: 'PATCH', key: bob.key, json: { templateId: tpl.id } })).status).toBe(200);
    expect((await rec(a)).version).toBe(v0 + 1);
  });

  test('another account never sees the env values of a public template: REST get and list, GraphQL podTemplate and podTemplates, includeTemplate', async () => {
    expect((await json(await cp.api(`/v2/templates/${tpl.id}`, { key: alice.key }))).env).toMatchObject({ MODEL_TOKEN: 'x' });
    const got = await json(await cp.api(`/v2/templates/${tpl.id}`, { key: bob.key }));
    expect(got.id).toBe(tpl.id);
    expect(got.env).toEqual({});
    const listed = (await json(await cp.api('/v2/templates?includePublic=true', { key: bob.key }))).templates.find((t: J) => t.id === tpl.id);
    expect(listed.env).toEqual({});
    const one = await gql(bob.key, 'query T($id: String!) { podTemplate(id: $id) { id env { key value } } }', { id: tpl.id });
    expect(one.data.podTemplate).toEqual({ id: tpl.id, env: [] });
    const many = await gql(bob.key, 'query { podTemplates(input: { isPublic: true }) { id env { key value } } }');
    expect(many.errors, JSON.stringify(many)).toBeUndefined();
    expect(many.data.podTemplates.find((t: J) => t.id === tpl.id).env).toEqual([]);
    const ep = (await json(await cp.api('/v1/endpoints', { key: bob.key })))[0];
    const inc = await json(await cp.api(`/v1/endpoints/${ep.id}?includeTemplate=true`, { key: bob.key }));
    expect(inc.template.env).toEqual({});
    for (const body of [got, listed, one, many, inc]) expect(JSON.stringify(body)).not.toMatch(/alice-secret|"x"|EVIL/);
  });
});

describe('the upgrade of stored records', () => {
  test("an endpoint of another account written before pins is pinned to the template as it is at upgrade; the owner's is left live", async () => {
    const bobEp = (await json(await cp.api('/v1/endpoints', { method: 'POST', key: bob.key, json: endpointBody('legacy-bob') }))).id as string;
    const aliceEp = (await json(await cp.api('/v1/endpoints', { method: 'POST', key: alice.key, json: endpointBody('legacy-alice') }))).id as string;
    // as an earlier version wrote them: no templatePin field
    await cp.services.store.transact(async (tx) => {
      for (const id of [bobEp, aliceEp]) {
        const { templatePin: _p, ...old } = (await tx.get('endpoints', id))!;
        tx.put('endpoints', old as EndpointRecord);
      }
    });
    expect((await rec(bobEp)).templatePin).toBeUndefined();
    const current = (await cp.services.store.get('templates', tpl.id))!;
    expect(await pinEndpointsOfOthers(cp.services.store)).toBe(1);
    expect((await rec(bobEp)).templatePin).toMatchObject({ image: current.image, args: current.args, templateUpdatedAt: current.updatedAt });
    expect((await rec(aliceEp)).templatePin).toBeNull();
    await cp.api(`/v2/templates/${tpl.id}`, { method: 'PATCH', key: alice.key, json: { image: 'busybox:1.39' } });
    expect(await builds(bobEp)).toMatchObject({ image: current.image });
    expect(await builds(aliceEp)).toMatchObject({ image: 'busybox:1.39' });
    // run again: nothing left to pin
    expect(await pinEndpointsOfOthers(cp.services.store)).toBe(0);
  });
});
