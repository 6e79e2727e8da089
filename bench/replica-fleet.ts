// A simulated fleet for bench/replicas.ts: N host records, one stopped pod on each, and control-plane
// replicas running the real reconcile loop (provisioner/Reconciler, with its leases) over the real
// store. Only the hosts are fake: an in-process SSH pool that answers every command after a fixed
// round-trip time as an empty Docker host would (`docker ps` lists nothing, so a pass has nothing to
// create). Measured: from one commit that changes every host's pod until every host has had a pass
// that began after it.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { closeServices, configFromEnv, createServices, type Services } from '../core/index.ts';
import type { ExecResult, SshPool } from '../fleet/index.ts';
import type { PodRecord } from '../model/index.ts';
import { Reconciler } from '../provisioner/index.ts';
import { fakeHostRecord } from '../test/harness/fake-hosts.ts';

/** Answers like an empty Docker host over SSH, after `latencyMs`. */
class FakeHostsPool {
  commands = 0;
  constructor(private readonly latencyMs: number) {}
  async exec(_target: unknown, command: string | string[]): Promise<ExecResult> {
    this.commands++;
    await new Promise((r) => setTimeout(r, this.latencyMs));
    const cmd = Array.isArray(command) ? command.join(' ') : command;
    return { code: 0, stdout: cmd.includes('docker ps') ? '[]' : '', stderr: '' };
  }
  async closeAll(): Promise<void> {}
}

export interface FleetRun {
  /** from the commit to the last host's pass that began after it */
  seconds: number;
  /** hosts each replica held when the change was made */
  held: number[];
  /** time for every host to be reconciled once from a cold start (leases taken, first passes) */
  settleSeconds: number;
}

export async function fleetRound(opts: { databaseUrl?: string; secretKey?: Buffer; replicas: number; hosts: number; latencyMs: number }): Promise<FleetRun> {
  const dirs: string[] = [];
  const services: Services[] = [];
  const reconcilers: Reconciler[] = [];
  try {
    for (let i = 0; i < opts.replicas; i++) {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bench-fleet-'));
      dirs.push(dataDir);
      const config = { ...configFromEnv({}), dataDir, databaseUrl: opts.databaseUrl, secretKey: opts.secretKey, logLevel: 'silent', reconcileIntervalMs: 600_000 };
      const s = await createServices(config);
      s.sshPool = new FakeHostsPool(opts.latencyMs) as unknown as SshPool;
      services.push(s);
    }
    const s0 = services[0]!;
    // hosts with a sealed (dummy) key, and one stopped pod on each, cloned from one the service made
    const hosts = Array.from({ length: opts.hosts }, (_, i) => ({ ...fakeHostRecord({ id: `fleet-${i}`, gpus: 0 }), privateKeyEnc: s0.secretBox.seal('not a key') }));
    await s0.store.transact((tx) => {
      for (const h of hosts) tx.put('hosts', h);
    });
    const account = await s0.keys.createAccount({ email: `fleet-${Date.now()}@bench.local`, balance: 1000 });
    const { key } = await s0.keys.createKey({ accountId: account.id, name: 'bench', scope: 'read_write' });
    const principal = await s0.keys.authenticate(`Bearer ${key}`);
    const { pod } = await s0.pods.create(principal, { name: 'fleet-template', image: 'busybox:1.36', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } });
    await s0.store.transact((tx) => {
      tx.delete('pods', pod.id);
      hosts.forEach((h, i) => {
        const p: PodRecord = {
          ...pod,
          id: `fleetpod${i}`,
          name: `fleet-${i}`,
          hostId: h.id,
          desiredStatus: 'EXITED',
          status: 'EXITED',
          statusReason: 'container stopped; GPUs released',
          allocated: false,
          gpuUuids: [],
          observed: null,
        };
        tx.put('pods', p);
      });
    });

    // passes, by host: when the last one ended and when it began
    let since = Number.POSITIVE_INFINITY;
    const after = new Set<string>();
    let allDone: (() => void) | null = null;
    const observer = {
      reconciled(hostId: string, seconds: number) {
        const end = performance.now();
        if (end - seconds * 1000 >= since) {
          after.add(hostId);
          if (after.size === opts.hosts) allDone?.();
        }
      },
      gpusSampled() {},
    };
    const round = (timeoutMs: number) =>
      new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`only ${after.size} of ${opts.hosts} hosts reconciled in ${timeoutMs} ms`)), timeoutMs);
        allDone = () => {
          clearTimeout(t);
          resolve();
        };
      });

    // cold start: every replica takes its share of the leases and reconciles its hosts once
    since = performance.now();
    const settled = round(300_000);
    for (const s of services) {
      const r = new Reconciler(s, { intervalMs: 600_000, observer });
      reconcilers.push(r);
      r.start();
    }
    await settled;
    const settleSeconds = (performance.now() - since) / 1000;
    // let the lease loops see each other (a replica that started first sheds its excess) and go quiet
    for (let i = 0; i < 40; i++) {
      const held = reconcilers.map((r) => r.leases.held().length);
      if (held.reduce((a, b) => a + b, 0) === opts.hosts && Math.max(...held) - Math.min(...held) <= 1) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 500));
    const held = reconcilers.map((r) => r.leases.held().length);

    // the change: one commit touching every host's pod
    after.clear();
    const pods = await s0.store.list('pods', { accountId: account.id });
    const done = round(300_000);
    since = performance.now();
    const stamp = new Date().toISOString();
    await s0.store.transact((tx) => {
      for (const p of pods) tx.put('pods', { ...p, updatedAt: stamp });
    });
    await done;
    return { seconds: (performance.now() - since) / 1000, held, settleSeconds };
  } finally {
    for (const r of reconcilers) await r.stop();
    for (const s of services) {
      await closeServices(s);
      await s.store.close();
    }
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}
