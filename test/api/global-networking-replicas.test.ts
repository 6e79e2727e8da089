// Two replicas on one PostgreSQL database giving overlay addresses at once (issue 21): 50 globally
// networked pods created together, half through each replica, all get distinct addresses. The range
// is a /24 (253 addresses a pod may get), so two replicas drawing the same address at once is likely:
// the second must be refused at commit (SERIALIZABLE, and the unique index gf_pods_overlay_ip) and its
// transaction run again, or two pods share an address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globalNetworkSettings } from '../../model/index.ts';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { replicasOnOneDatabase } from '../harness/replicas-on-one-database.ts';

const SECRET_KEY = Buffer.alloc(32, 7);
const CIDR = '10.202.7.0/24';

let cluster: TestPostgres;
let cps: TestControlPlane[] = [];

beforeAll(async () => {
  cluster = await startPostgres();
  cps = await replicasOnOneDatabase(cluster, 2, { secretKey: SECRET_KEY, globalNetwork: globalNetworkSettings({ overlayCidr: CIDR }) });
  await seedHosts(cps[0]!.services.store, [{ gpus: 0, cpuCount: 100_000, memoryGb: 1_000_000, diskFreeGb: 10_000_000 }]);
}, 120_000);

afterAll(async () => {
  await Promise.all(cps.map((cp) => cp.close()));
  await cluster?.stop();
});

describe('overlay addresses across replicas', () => {
  it('50 pods created at once through two replicas get 50 distinct addresses of the range, one per pod in the database', async () => {
    const made = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        cps[i % 2]!.api('/v2/pods', {
          method: 'POST',
          json: { name: `gn-${i}`, image: 'img', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, globalNetworking: true },
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string; globalNetworking: { ip: string } } })),
      ),
    );
    expect(made.map((m) => m.status), JSON.stringify(made.find((m) => m.status !== 201)?.body)).toEqual(made.map(() => 201));
    const ips = made.map((m) => m.body.globalNetworking.ip);
    expect(new Set(ips).size).toBe(50);
    for (const ip of ips) expect(ip).toMatch(/^10\.202\.7\.(\d+)$/);
    expect(ips.every((ip) => Number(ip.split('.')[3]) >= 2 && Number(ip.split('.')[3]) <= 254)).toBe(true);
    // what the database holds, read through the other replica
    const stored = (await cps[1]!.services.store.list('pods')).map((p) => p.overlayIp);
    expect(stored).toHaveLength(50);
    expect(new Set(stored).size).toBe(50);
  }, 120_000);
});
