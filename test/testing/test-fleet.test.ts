// startTestFleet (testing/test-fleet.ts) from the sources, beyond what examples/test-fleet.ts and
// test/package/outside-stack.test.ts (the installed package) show: hosts given one by one (a CPU
// host beside a GPU host), the data center they are enrolled in, the two keys and what each may do,
// `serverless: true` listening where containers reach it, a fleet that fails to start cleaning up
// after itself, and close() leaving nothing: no sshd, no data directory.
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { dockerBridgeGateway, FIXTURE_GPUS, startTestFleet, type TestFleet } from '../../testing/index.ts';

let fleet: TestFleet;
const closed: string[] = [];

beforeAll(async () => {
  fleet = await startTestFleet({ hosts: [{ gpus: [] }, { gpus: [FIXTURE_GPUS.A100_SXM4_80GB] }], dataCenterId: 'dc-fleet-test', serverless: true });
});
afterAll(async () => {
  if (!closed.length) await fleet?.close();
});

const get = async (path: string, key: string) => {
  const res = await fetch(fleet.url + path, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

test('each host as asked: a CPU host and an A100 host, probed and READY in the data center given', async () => {
  const [cpu, gpu] = await Promise.all(fleet.hosts.map((h) => get(`/v2/hosts/${h.id}`, fleet.keys.admin)));
  expect(cpu!.body).toMatchObject({ status: 'READY', dataCenterId: 'dc-fleet-test' });
  expect(cpu!.body.facts.gpus).toEqual([]);
  expect(gpu!.body).toMatchObject({ status: 'READY', dataCenterId: 'dc-fleet-test' });
  expect(gpu!.body.facts.gpus.map((g: { typeId: string }) => g.typeId)).toEqual(['NVIDIA A100-SXM4-80GB']);
});

test('keys.admin is the operator, keys.user a tenant with credit that sees no hosts', async () => {
  expect((await get('/v2/hosts', fleet.keys.admin)).status).toBe(200);
  expect((await get('/v2/hosts', fleet.keys.user)).status).toBe(403);
  expect((await get('/v2/pods', fleet.keys.user)).body).toEqual({ pods: [] });
});

test('serverless: true listens on the Docker bridge gateway, where worker containers reach it', async () => {
  expect(new URL(fleet.url).hostname).toBe(await dockerBridgeGateway());
});

test('a fleet that cannot start (its enrolment refused) throws and leaves none of its test hosts behind', async () => {
  // each test host's folder (keys, sshd_config) is named after the fleet, which is named after this process
  const hostDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`gpufleet-host-fleet${process.pid}-`));
  const before = hostDirs();
  await expect(startTestFleet({ hosts: 2, dataCenterId: 'not a data center!' })).rejects.toThrow(/enrolling test host .*: expected 201, got 4\d\d/);
  expect(hostDirs()).toEqual(before);
});

test('close() stops every host and removes the data directory', async () => {
  const dataDir = fleet.controlPlane.dataDir;
  expect(existsSync(dataDir)).toBe(true);
  await fleet.close();
  closed.push('done');
  expect(existsSync(dataDir)).toBe(false);
  for (const h of fleet.hosts) {
    const refused = await new Promise<boolean>((resolve) => {
      const sock = connect({ host: h.address, port: h.port }, () => (sock.destroy(), resolve(false)));
      sock.on('error', () => resolve(true));
    });
    expect(refused, `${h.address}:${h.port}`).toBe(true);
  }
});
