// Records as the background loops leave them (the GPU watcher, heartbeats, the overlay, the provisioner),
// written straight into a control plane's store, so the serializers on/off comparison drives every field
// of the host and pod views without real hosts.
import type { TestControlPlane } from '../../harness/control-plane.ts';

export const GPU_UUID = 'GPU-8f2a6c1e-0b1d-4e55-9a3c-5d7e0f1a2b3c';

/** a host as the GPU watcher, the heartbeats and the overlay leave it: an incident, a watch position, a private image, its underlay MTU and WireGuard key; cpu-host unreachable */
export async function enrichHosts(cp: TestControlPlane): Promise<void> {
  const now = new Date().toISOString();
  await cp.services.store.transact(async (tx) => {
    const h = (await tx.get('hosts', 'gpu-1'))!;
    const gpus = h.facts.gpus.map((g, i) =>
      i === 0
        ? {
            ...g,
            uuid: GPU_UUID,
            busId: '00000000:3B:00.0',
            health: 'FAILURE' as const,
            incidents: [{ kind: 'xid' as const, xid: 79, counter: null, mnemonic: 'GPU_HAS_FALLEN_OFF_THE_BUS', action: 'RESTART_BM', health: 'FAILURE' as const, live: true, message: 'Xid 79', firstSeen: now, liveSince: now, lastSeen: now, count: 2, resolvedAt: null }],
          }
        : g,
    );
    tx.put('hosts', {
      ...h,
      facts: { ...h.facts, gpus, addresses: ['192.0.2.1/24'], dockerPools: ['172.80.0.0/16'] },
      privateImages: [{ imageId: `sha256:${'a'.repeat(64)}`, accountIds: ['acct-1'] }],
      gpuWatch: { source: 'dmesg', cursor: null, bootId: 'b00t', monotonicUs: 123456789, linesAtMonotonic: 1, firstReadAt: now, firstReadBootId: 'b00t', firstReadMonotonicUs: 1000, counters: { [GPU_UUID]: { 'ecc.errors.uncorrected.volatile.total': 0 } } },
      stuckContainers: [{ podId: 'pod-x', since: now }],
      overlay: { underlayMtu: 1500, wireguardPublicKey: 'wf6Ql1jN1GGfwczeA8DBWJviDKMzudwdnlXgevUE6zA=' },
      bootId: '5b1c3f0e-2a4d-4c6b-9e8f-0a1b2c3d4e5f',
      connectedAddress: '192.0.2.1',
      overlayAddress: '192.0.2.1',
    });
    const c = (await tx.get('hosts', 'cpu-host'))!;
    tx.put('hosts', { ...c, status: 'UNREACHABLE', statusReason: 'no answer', missedHeartbeats: 9, unansweredSince: now });
  });
}

/** a pod as the provisioner leaves it running: ports published, GPUs busy, SSH answering */
export async function makeRunning(cp: TestControlPlane, id: string): Promise<void> {
  const now = new Date().toISOString();
  await cp.services.store.transact(async (tx) => {
    const p = await tx.get('pods', id);
    if (!p) throw new Error(`no pod ${id}`);
    tx.put('pods', {
      ...p,
      status: 'RUNNING',
      startedAt: now,
      observed: {
        containerId: 'c0ffee',
        containerStartedAt: now,
        ports: [
          { private: 8888, public: 40001, type: 'http', ip: '203.0.113.7' },
          { private: 22, public: 40002, type: 'tcp', ip: '203.0.113.7' },
        ],
        gpus: [{ util: 37, memoryUtil: 12.5 }, { util: 0, memoryUtil: 0 }],
        cpuUtil: 4.25,
        memoryUtil: 61,
        observedAt: now,
        sshAnswers: true,
      },
    });
  });
}
