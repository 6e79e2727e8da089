// Two replicas on one PostgreSQL database giving overlay addresses at once (issue 21): 50 globally
// networked pods created together, half through each replica, all get distinct addresses. The range
// is a /22 (1,021 addresses a pod may get): small enough that two creates draw the same address now and
// then, when the second must be refused at commit (the unique index gf_pods_overlay_ip) and its
// transaction run again, or two pods share an address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalNetworkSettings, ipv4ToNumber, parseIpv4Range } from '../../model/index.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { replicasOnOneDatabase } from '../harness/replicas-on-one-database.ts';

const SECRET_KEY = Buffer.alloc(32, 7);
const CIDR = '10.202.4.0/22';

let cluster: TestPostgres;
let cps: TestControlPlane[] = [];
const keys: string[] = [];

beforeAll(async () => {
  cluster = await startPostgres();
  cps = await replicasOnOneDatabase(cluster, 2, { secretKey: SECRET_KEY, globalNetwork: globalNetworkSettings({ overlayCidr: CIDR }) });
  const host = { gpus: 0, cpuCount: 100_000, memoryGb: 1_000_000, diskFreeGb: 10_000_000 };
  await seedHosts(cps[0]!.services.store, [host, host, host, host, host]);
  // addresses are unique across accounts: ten accounts; and a create's other checks (per host, per
  // account) are not what this test loads
  for (let i = 0; i < 10; i++) keys.push((await cps[0]!.newAccount('read_write', 1000)).key);
}, 120_000);

afterAll(async () => {
  await Promise.all(cps.map((cp) => cp.close()));
  await cluster?.stop();
});

describe('overlay addresses across replicas', () => {
  it('50 pods of ten accounts created at once through two replicas get 50 distinct addresses of the range, one per pod in the database', async () => {
    // all 50 sent at once; one the store answers 503 STORE_UNAVAILABLE (its retries ran out on a loaded
    // machine, nothing written, "try again") is sent again after its Retry-After, as a client does
    const create = async (i: number): Promise<{ status: number; body: { id: string; globalNetworking: { ip: string } } }> => {
      for (;;) {
        const r = await cps[i % 2]!.api('/v2/pods', {
          method: 'POST',
          key: keys[i % keys.length]!,
          json: { name: `gn-${i}`, image: 'img', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, globalNetworking: true },
        });
        const body = (await r.json()) as { id: string; code?: string; globalNetworking: { ip: string } };
        if (r.status !== 503 || body.code !== 'STORE_UNAVAILABLE') return { status: r.status, body };
        await new Promise((res) => setTimeout(res, 1_000));
      }
    };
    const made = await Promise.all(Array.from({ length: 50 }, (_, i) => create(i)));
    expect(made.map((m) => m.status), JSON.stringify(made.find((m) => m.status !== 201)?.body)).toEqual(made.map(() => 201));
    const ips = made.map((m) => m.body.globalNetworking.ip);
    expect(new Set(ips).size).toBe(50);
    const range = parseIpv4Range(CIDR)!;
    for (const ip of ips) expect(ipv4ToNumber(ip)! - range.base).toBeGreaterThanOrEqual(2);
    for (const ip of ips) expect(ipv4ToNumber(ip)! - range.base).toBeLessThanOrEqual(range.size - 2);
    // what the database holds, read through the other replica
    const stored = (await cps[1]!.services.store.list('pods')).map((p) => p.overlayIp);
    expect(stored).toHaveLength(50);
    expect(stored.every((ip) => ip !== undefined)).toBe(true);
    expect(new Set(stored).size).toBe(50);
  }, 120_000);
});
