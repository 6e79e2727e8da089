// Several control planes on one PostgreSQL database never give a host more vCPU, memory or disk than
// it has (docs/postgres.md, "No GPU is given twice"): concurrent creates spread over three replicas
// against hosts whose vCPU, memory or disk runs out before their GPUs, asking for GPUs of two types or
// none at all (so that no GPU claim conflict can stand in for the check); the host's placed pods always
// fit it, every refused create is 400 CAPACITY_UNAVAILABLE, and no request gets a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodRecord } from '../../model/index.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { fakeHostRecord, seedHosts, type FakeHostSpec } from '../harness/fake-hosts.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { replicasOnOneDatabase } from '../harness/replicas-on-one-database.ts';

const SECRET_KEY = Buffer.alloc(32, 9);
const H100 = 'NVIDIA H100 80GB HBM3';
const A100 = 'NVIDIA A100 80GB PCIe';
const CREATES = 30;

let cluster: TestPostgres;
let cps: TestControlPlane[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
  cps = await replicasOnOneDatabase(cluster, 3, { secretKey: SECRET_KEY });
}, 120_000);
afterAll(async () => {
  await Promise.all(cps.map((cp) => cp.close()));
  await cluster?.stop();
});

interface Answer {
  status: number;
  code: string | undefined;
}

/** `CREATES` creates at once, round-robin over the replicas; each answer's HTTP status and error code */
function createAll(create: (cp: TestControlPlane, i: number) => Promise<Answer>): Promise<Answer[]> {
  return Promise.all(Array.from({ length: CREATES }, (_, i) => create(cps[i % cps.length]!, i)));
}

async function rest(cp: TestControlPlane, body: Record<string, unknown>): Promise<Answer> {
  const r = await cp.api('/v2/pods', { method: 'POST', json: body });
  const json = (await r.json()) as { code?: string };
  return { status: r.status, code: r.status === 201 ? undefined : json.code };
}

/** What the database holds placed on the host, summed as the scheduler counts it. */
async function loadOn(hostId: string): Promise<{ pods: PodRecord[]; vcpu: number; memoryGb: number; diskGb: number }> {
  const pods = (await cps[0]!.services.store.list('pods', { hostId })).filter((p) => p.allocated);
  const sum = (f: (p: PodRecord) => number) => pods.reduce((n, p) => n + f(p), 0);
  return {
    pods,
    vcpu: sum((p) => p.cpu?.vcpuCount ?? p.reservedVcpu),
    memoryGb: sum((p) => p.cpu?.memory ?? p.reservedMemoryGb),
    diskGb: sum((p) => p.disk + (p.mounts.persistent?.size ?? 0)),
  };
}

function expectOnlyPlacedOrRefused(answers: Answer[], placed: number): void {
  expect(answers.filter((a) => a.status >= 500)).toEqual([]);
  expect(answers.filter((a) => a.status === 201)).toHaveLength(placed);
  const refused = answers.filter((a) => a.status !== 201);
  expect(refused).toEqual(Array(CREATES - placed).fill({ status: 400, code: 'CAPACITY_UNAVAILABLE' }));
}

async function host(spec: FakeHostSpec): Promise<string> {
  const [h] = await seedHosts(cps[0]!.services.store, [spec]);
  return h!.id;
}

/** 8 H100 and 8 A100: creates asking for different types never claim the same GPU */
async function twoTypeHost(spec: FakeHostSpec): Promise<string> {
  const h = fakeHostRecord({ ...spec, gpus: 16 });
  const gpus = h.facts.gpus.map((g, i) => (i < 8 ? g : { ...g, name: A100, typeId: A100 }));
  await cps[0]!.services.store.transact((tx) => tx.put('hosts', { ...h, facts: { ...h.facts, gpus } }));
  return h.id;
}

describe('concurrent creates over three replicas never overcommit a host', () => {
  it('vCPU: GPU pods of two types reserving 4 vCPUs each on a 16-GPU host with 24 vCPUs place 6 (GraphQL minVcpuCount)', async () => {
    const hostId = await twoTypeHost({ cpuCount: 24, memoryGb: 1024, dataCenterId: 'dc-vcpu' });
    const answers = await createAll(async (cp, i) => {
      const r = await cp.api('/graphql', {
        method: 'POST',
        json: {
          query: `mutation { podFindAndDeployOnDemand(input: {name: "v-${i}", imageName: "img", gpuTypeId: "${i % 2 ? A100 : H100}", gpuCount: 1, minVcpuCount: 4, minMemoryInGb: 8, containerDiskInGb: 1, dataCenterId: "dc-vcpu", cloudType: ALL}) { id } }`,
        },
      });
      const body = (await r.json()) as { data?: { podFindAndDeployOnDemand: { id: string } | null }; errors?: { extensions?: { code?: string } }[] };
      if (r.status >= 500) return { status: r.status, code: undefined };
      if (body.data?.podFindAndDeployOnDemand) return { status: 201, code: undefined };
      // GraphQL answers its errors in the body: the registry code's HTTP status is what REST would say
      const code = body.errors?.[0]?.extensions?.code;
      return { status: code === 'CAPACITY_UNAVAILABLE' ? 400 : 500, code };
    });
    const load = await loadOn(hostId);
    expect(load.vcpu).toBeLessThanOrEqual(24);
    expectOnlyPlacedOrRefused(answers, 6);
    expect(load.pods).toHaveLength(6);
    expect(new Set(load.pods.flatMap((p) => p.gpuUuids)).size).toBe(6);
  }, 120_000);

  it('memory: CPU pods of 2 vCPUs and 4 GB on a GPU-less host with 64 vCPUs and 32 GB place 8', async () => {
    const hostId = await host({ gpus: 0, cpuCount: 64, memoryGb: 32, dataCenterId: 'dc-mem' });
    const answers = await createAll((cp, i) =>
      rest(cp, { name: `m-${i}`, image: 'img', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, dataCenterIds: ['dc-mem'] }),
    );
    const load = await loadOn(hostId);
    expect(load.memoryGb).toBeLessThanOrEqual(32);
    expect(load.vcpu).toBeLessThanOrEqual(64);
    expectOnlyPlacedOrRefused(answers, 8);
  }, 120_000);

  it('vCPU and disk: CPU pods of 4 vCPUs and 10 GB of disk on a host with 24 vCPUs and 50 GB place 5 (disk runs out first)', async () => {
    const hostId = await host({ gpus: 0, cpuCount: 24, memoryGb: 1024, diskFreeGb: 50, dataCenterId: 'dc-disk' });
    const answers = await createAll((cp, i) =>
      rest(cp, { name: `d-${i}`, image: 'img', disk: 10, cpu: { id: 'cpu3c', vcpuCount: 4, memory: 4 }, dataCenterIds: ['dc-disk'] }),
    );
    const load = await loadOn(hostId);
    expect(load.diskGb).toBeLessThanOrEqual(50);
    expect(load.vcpu).toBeLessThanOrEqual(24);
    expectOnlyPlacedOrRefused(answers, 5);
  }, 120_000);

  it('every replica has heard of what the others placed: each now refuses at once', async () => {
    for (const cp of cps) {
      const r = await rest(cp, { name: `late-${Math.random()}`, image: 'img', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, dataCenterIds: ['dc-mem'] });
      expect(r).toEqual({ status: 400, code: 'CAPACITY_UNAVAILABLE' });
    }
  });
});
