// Global networking's addresses and settings (issue 21, docs/networking.md), through the API: the pod
// view of spec 2.1, REST create and PATCH, GraphQL's globalNetwork, the catalog, excluded data
// centers, and the address kept for the pod's life. No provisioner (record-only hosts): what reaches
// the hosts is test/provisioner/overlay/global-networking-*.test.ts's.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { globalNetworkSettings, parseIpv4Range, parseOverlayCidr, ipv4ToNumber } from '../../model/index.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { runpodctl } from './graphql/gql-client.ts';
import { CREATE_POD } from './graphql/runpodctl-texts.ts';
import { call, cpuBody, createPod, DC, DC2, expectProblem, forceStatus, gpuBody, startPodsControlPlane } from './pods-helpers.ts';

const CIDR = '10.201.0.0/16';
const DOMAIN = 'pods.example.internal';
let cp: TestControlPlane;
let user: { accountId: string; key: string };
let other: { accountId: string; key: string };

beforeAll(async () => {
  // DC2 is outside the global network
  cp = await startPodsControlPlane({ config: { globalNetwork: globalNetworkSettings({ overlayCidr: CIDR, internalDomain: DOMAIN, exclude: DC2 }) } });
  user = await cp.newAccount('read_write', 1000);
  other = await cp.newAccount('read_write', 1000);
});
afterAll(async () => cp?.close());

const get = async (id: string, key = user.key) => (await call(cp, `/v2/pods/${id}`, { key })).body;
const act = (id: string, action: string) => call(cp, `/v2/pods/${id}/action`, { method: 'POST', json: { action }, key: user.key });
const inRange = (ip: string) => {
  const r = parseIpv4Range(CIDR)!;
  const n = ipv4ToNumber(ip)!;
  return n > r.base + 1 && n < r.base + r.size - 1;
};

describe('the pod view (spec 2.1)', () => {
  test('created with globalNetworking: true → {enabled: true, ip, internalDns: <id>.<domain>}, in the overlay range', async () => {
    const { status, body } = await createPod(cp, gpuBody({ globalNetworking: true }), user.key);
    expect(status).toBe(201);
    expect(body.globalNetworking).toEqual({ enabled: true, ip: expect.any(String), internalDns: `${body.id}.${DOMAIN}` });
    expect(inRange(body.globalNetworking.ip)).toBe(true);
    expect(body.dataCenterId).toBe(DC);
    // the list shows the same
    const list = (await call(cp, '/v2/pods', { key: user.key })).body.pods as { id: string; globalNetworking: unknown }[];
    expect(list.find((p) => p.id === body.id)?.globalNetworking).toEqual(body.globalNetworking);
    // CPU pods too
    const cpu = await createPod(cp, cpuBody({ globalNetworking: true }), user.key);
    expect(cpu.body.globalNetworking.enabled).toBe(true);
  });

  test('without it: {enabled: false} and no address', async () => {
    const { body } = await createPod(cp, gpuBody(), user.key);
    expect(body.globalNetworking).toEqual({ enabled: false });
    expect((await cp.services.store.get('pods', body.id))?.overlayIp).toBeUndefined();
  });

  test('GraphQL globalNetwork: true (runpodctl\'s own mutation text) gives the pod an address', async () => {
    const r = await runpodctl(cp.url, { key: user.key }, CREATE_POD, { input: { name: 'gql-gn', imageName: 'img', gpuTypeId: 'NVIDIA H100 80GB HBM3', globalNetwork: true } });
    expect(r.errors).toBeUndefined();
    const id = r.data.podFindAndDeployOnDemand.id as string;
    expect((await get(id)).globalNetworking).toMatchObject({ enabled: true, internalDns: `${id}.${DOMAIN}` });
  });
});

describe('the address is the pod\'s for its whole life', () => {
  test('PATCH off and on again, stop and start (placed anew), restart: the same address; terminate frees it', async () => {
    const { body } = await createPod(cp, gpuBody({ globalNetworking: true }), user.key);
    const ip = body.globalNetworking.ip as string;
    let c = await call(cp, `/v2/pods/${body.id}`, { method: 'PATCH', json: { globalNetworking: false }, key: user.key });
    expect(c.status).toBe(200);
    expect(c.body.globalNetworking).toEqual({ enabled: false });
    c = await call(cp, `/v2/pods/${body.id}`, { method: 'PATCH', json: { globalNetworking: true }, key: user.key });
    expect(c.body.globalNetworking).toEqual({ enabled: true, ip, internalDns: `${body.id}.${DOMAIN}` });
    // no restart for it: the container's configuration did not change
    expect((await cp.services.store.get('pods', body.id))?.specGeneration).toBe(0);
    // as the provisioner would report it (no provisioner here)
    await forceStatus(cp, body.id, 'RUNNING');
    expect((await act(body.id, 'stop')).status).toBe(200);
    await forceStatus(cp, body.id, 'EXITED');
    expect((await act(body.id, 'start')).status).toBe(200);
    expect((await get(body.id)).globalNetworking.ip).toBe(ip);
    await forceStatus(cp, body.id, 'RUNNING');
    expect((await act(body.id, 'restart')).status).toBe(200);
    expect((await get(body.id)).globalNetworking.ip).toBe(ip);
    expect((await act(body.id, 'terminate')).status).toBeLessThan(300);
    expect((await get(body.id)).globalNetworking).toEqual({ enabled: false });
    expect((await cp.services.store.get('pods', body.id))?.overlayIp).toBeUndefined();
  });

  test('a PATCH turning it on for a pod that never had it gives an address then, without a restart', async () => {
    const { body } = await createPod(cp, gpuBody(), user.key);
    const c = await call(cp, `/v2/pods/${body.id}`, { method: 'PATCH', json: { globalNetworking: true }, key: user.key });
    expect(c.status).toBe(200);
    expect(inRange(c.body.globalNetworking.ip)).toBe(true);
    expect((await cp.services.store.get('pods', body.id))?.specGeneration).toBe(0);
  });

  test('addresses are unique across accounts: 50 pods of two accounts created at once all differ', async () => {
    const made = await Promise.all(
      Array.from({ length: 50 }, (_, i) => createPod(cp, cpuBody({ globalNetworking: true }), i % 2 ? user.key : other.key)),
    );
    expect(made.map((m) => m.status)).toEqual(made.map(() => 201));
    const ips = made.map((m) => m.body.globalNetworking.ip as string);
    expect(new Set(ips).size).toBe(50);
    const stored = (await cp.services.store.list('pods')).filter((p) => p.overlayIp).map((p) => p.overlayIp);
    expect(new Set(stored).size).toBe(stored.length);
  });
});

describe('data centers outside the global network (GPUFLEET_GLOBAL_NETWORK_EXCLUDE)', () => {
  test('the catalog says which data centers are in it', async () => {
    const dcs = (await call(cp, '/v2/catalog/datacenters', { key: user.key })).body.dataCenters as { id: string; globalNetwork: boolean }[];
    expect(dcs.find((d) => d.id === DC)?.globalNetwork).toBe(true);
    expect(dcs.find((d) => d.id === DC2)?.globalNetwork).toBe(false);
  });

  test('a create asking only for an excluded data center → 400 naming $.globalNetworking, nothing stored; without a data center it lands in one that is in', async () => {
    const before = await cp.services.store.count('pods', { accountId: user.accountId });
    const c = await call(cp, '/v2/pods', { method: 'POST', json: gpuBody({ globalNetworking: true, dataCenterIds: [DC2] }), key: user.key });
    expectProblem(c, 400, { code: 'BAD_REQUEST', errorMatching: '$.globalNetworking' });
    expect(await cp.services.store.count('pods', { accountId: user.accountId })).toBe(before);
    for (let i = 0; i < 6; i++) expect((await createPod(cp, cpuBody({ globalNetworking: true }), user.key)).body.dataCenterId).toBe(DC);
  });

  test('a PATCH turning it on for a pod in an excluded data center → 400 naming the field; the pod is unchanged', async () => {
    const { body } = await createPod(cp, gpuBody({ dataCenterIds: [DC2] }), user.key);
    const before = await cp.services.store.get('pods', body.id);
    const c = await call(cp, `/v2/pods/${body.id}`, { method: 'PATCH', json: { globalNetworking: true, name: 'renamed-too' }, key: user.key });
    expectProblem(c, 400, { code: 'BAD_REQUEST', errorMatching: '$.globalNetworking' });
    expect(await cp.services.store.get('pods', body.id)).toEqual(before);
  });
});

describe('the overlay range (GPUFLEET_OVERLAY_CIDR)', () => {
  test('the default is private and clear of Docker\'s default pools; a range overlapping them is refused', () => {
    expect(parseOverlayCidr(undefined).cidr).toBe('10.200.0.0/13');
    expect(() => parseOverlayCidr('172.20.0.0/16')).toThrow(/Docker's default address pool/);
    expect(() => parseOverlayCidr('192.168.10.0/24')).toThrow(/Docker's default address pool/);
    expect(() => parseOverlayCidr('8.8.0.0/16')).toThrow(/private range/);
    expect(() => parseOverlayCidr('10.0.0.0/30')).toThrow(/smaller than a \/28/);
    expect(() => parseOverlayCidr('10.0.0.300/16')).toThrow(/not an IPv4 range/);
    expect(parseOverlayCidr('10.99.3.7/16').cidr).toBe('10.99.0.0/16');
  });
});
