// Seeing a failing GPU (docs/gpu-health.md) on real sshd test hosts whose journalctl/dmesg and
// nvidia-smi are fixtures a test writes to (testing/gpu-fixtures.ts), with the provisioner's
// watcher following them over one SSH session per host: an Xid 79 line makes that GPU FAILURE within
// 10 s (and the view, the condition, the events, the metrics gauge, the signal say so); an Xid 13 line
// changes nothing; an uncorrected ECC counter that rises makes its GPU FAILURE; a GPU nvidia-smi no
// longer lists is FAILURE and stays on the host; a line from before the watcher first read the host
// is recorded with live=false. Runs on the embedded store and, with GPUFLEET_TEST_STORE=postgres, on
// PostgreSQL.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { waitFor } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';
import type { GpuHealthSignalEvent } from '../../core/index.ts';

type Json = Record<string, any>;

let cp: TestControlPlane;
let dmesgHost: TestHost;
let journalHost: TestHost;
let dmesgId = '';
let journalId = '';
const signals: GpuHealthSignalEvent[] = [];

const view = async (id: string) => (await (await cp.api(`/v2/hosts/${id}`)).json()) as Json;
const gpuOf = async (id: string, index: number) => (await view(id)).facts.gpus.find((g: Json) => g.index === index) as Json;
/** the watcher has polled the host once (its GPUs' bus ids are known) */
const watching = (id: string) => waitFor(`the GPU watcher of ${id}`, async () => (await view(id)).facts.gpus.every((g: Json) => g.busId), 30_000, 100);

beforeAll(async () => {
  const gpus = [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3];
  dmesgHost = await startTestHost({ name: `gpuwatch-dmesg-${process.pid}`, gpus, kernelLog: 'dmesg' });
  journalHost = await startTestHost({ name: `gpuwatch-journal-${process.pid}`, gpus, kernelLog: 'journal', remappedInQueryGpu: false });
  // on the journald host, a line from before gpufleet ever read it (an Xid of last week, still in the log)
  await journalHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:28:00): 79, pid=77, GPU has fallen off the bus.');
  // nvidia-smi's limit raised from 10 s: on a loaded test machine the fixture script itself can be slow, and
  // a poll past the limit is (rightly) a failed read on every GPU, which these tests are not about
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 500, config: { gpuPollSeconds: 1, gpuSmiTimeoutSeconds: 30 } });
  cp.services.gpuHealthSignal.subscribe((e) => void signals.push(e));
  dmesgId = await enrolTestHost(cp, dmesgHost);
  journalId = await enrolTestHost(cp, journalHost);
  await Promise.all([watching(dmesgId), watching(journalId)]);
}, 180_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host: dmesgHost, hostId: dmesgId });
  await journalHost?.dispose();
});

describe('the GPU watcher', () => {
  test('a GPU starts HEALTHY with no incident; the host condition says so', async () => {
    const v = await view(dmesgId);
    expect(v.facts.gpus.map((g: Json) => [g.health, g.incidents, g.busId])).toEqual([
      ['HEALTHY', [], '00000000:18:00.0'],
      ['HEALTHY', [], '00000000:28:00.0'],
    ]);
    expect(v.conditions.find((c: Json) => c.type === 'GpusHealthy')).toMatchObject({ status: 'True', reason: 'AllGpusHealthy' });
  });

  test('an Xid 13 line (an application error) changes nothing', async () => {
    await dmesgHost.gpu!.kernelLine("NVRM: Xid (PCI:0000:18:00): 13, pid=4242, name=python3, Graphics Exception: ESR 0x404600=0x80000002");
    // a later line on the same host shows the watcher read past it
    await dmesgHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:28:00): 94, pid=4243, Contained: SM (0x1). RST: No, D-RST: No');
    await waitFor('the Xid 94 recorded', async () => (await gpuOf(dmesgId, 1)).health === 'WARNING', 15_000, 100);
    expect(await gpuOf(dmesgId, 0)).toMatchObject({ health: 'HEALTHY', incidents: [] });
  });

  test('an Xid 79 line: that GPU is FAILURE within 10 s, with its incident, condition, events, gauge and signal', async () => {
    const written = Date.now();
    await dmesgHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.');
    await waitFor('GPU 0 in FAILURE', async () => (await gpuOf(dmesgId, 0)).health === 'FAILURE', 10_000, 100);
    const seconds = (Date.now() - written) / 1000;
    // the issue allows 10 s; on this loaded machine it is well under (printed for the report)
    console.log(`Xid 79 line → FAILURE in the store and view: ${seconds.toFixed(2)} s`);
    expect(seconds).toBeLessThanOrEqual(10);
    const g = await gpuOf(dmesgId, 0);
    expect(g.incidents).toMatchObject([{ kind: 'xid', xid: 79, counter: null, mnemonic: 'GPU_HAS_FALLEN_OFF_THE_BUS', action: 'RESTART_BM', health: 'FAILURE', live: true, count: 1, resolvedAt: null }]);
    expect(g.incidents[0].message).toContain('GPU has fallen off the bus');
    const v = await view(dmesgId);
    expect(v.conditions.find((c: Json) => c.type === 'GpusHealthy')).toMatchObject({ status: 'False', reason: 'GpuFailure' });
    const events = (await (await cp.api(`/v2/events?resourceId=${dmesgId}`)).json()) as { events: Json[] };
    expect(events.events.filter((e) => e.type.startsWith('host.gpu_'))).toMatchObject([
      { type: 'host.gpu_warning', status: 'WARNING', previousStatus: 'HEALTHY', actor: 'provisioner' },
      { type: 'host.gpu_failure', status: 'FAILURE', previousStatus: 'HEALTHY', reason: expect.stringContaining('Xid 79') },
    ]);
    const metrics = await (await cp.api('/metrics')).text();
    expect(metrics).toContain(`gpufleet_gpu_health{host="${dmesgId}",gpu="0",uuid="${g.uuid}"} 2`);
    expect(metrics).toContain(`gpufleet_gpu_health{host="${dmesgId}",gpu="1",uuid="${(await gpuOf(dmesgId, 1)).uuid}"} 1`);
    expect(signals.filter((s) => s.hostId === dmesgId && s.gpuIndex === 0)).toMatchObject([{ gpuUuid: g.uuid, health: 'FAILURE', previousHealth: 'HEALTHY', live: true, incident: { xid: 79 } }]);
  });

  test('a line from before the watcher first read the host is recorded, with live=false', async () => {
    const g = await waitFor('the old Xid 79 recorded', async () => {
      const x = await gpuOf(journalId, 1);
      return x.incidents.length > 0 ? x : null;
    }, 15_000, 100);
    expect(g).toMatchObject({ health: 'FAILURE', incidents: [{ xid: 79, live: false }] });
    expect(signals.filter((s) => s.hostId === journalId)).toMatchObject([{ gpuIndex: 1, live: false }]);
  });

  test('an uncorrected ECC counter that rises: FAILURE; the baseline read first was no incident', async () => {
    await journalHost.gpu!.setGpuField(0, 'ecc.errors.uncorrected.volatile.total', 2);
    await waitFor('GPU 0 in FAILURE', async () => (await gpuOf(journalId, 0)).health === 'FAILURE', 10_000, 100);
    expect((await gpuOf(journalId, 0)).incidents).toMatchObject([{ kind: 'counter', counter: 'ecc.errors.uncorrected.volatile.total', mnemonic: 'ECC_UNCORRECTED', live: true, message: expect.stringContaining('rose from 0 to 2') }]);
  });

  test('a remap failure read through --query-remapped-rows (the driver lacks it in --query-gpu)', async () => {
    await journalHost.gpu!.setGpuField(1, 'remapped_rows.failure', 'Yes');
    await waitFor('the remap failure recorded', async () => (await gpuOf(journalId, 1)).incidents.some((i: Json) => i.counter === 'remapped_rows.failure'), 10_000, 100);
  });

  test('a GPU nvidia-smi no longer lists is FAILURE and stays on the host, also through a refresh', async () => {
    await dmesgHost.gpu!.hideGpu(1);
    await waitFor('GPU 1 missing', async () => (await gpuOf(dmesgId, 1)).incidents.some((i: Json) => i.counter === 'gpu.missing'), 10_000, 100);
    expect(await gpuOf(dmesgId, 1)).toMatchObject({ health: 'FAILURE' });
    const r = await cp.api(`/v2/hosts/${dmesgId}/refresh`, { method: 'POST' });
    expect(r.status).toBe(200);
    const v = (await r.json()) as Json;
    expect(v.facts.gpus).toHaveLength(2);
    expect(v.facts.gpus[1]).toMatchObject({ health: 'FAILURE', incidents: expect.arrayContaining([expect.objectContaining({ counter: 'gpu.missing' })]) });
    await dmesgHost.gpu!.hideGpu(1, false);
  });
});
