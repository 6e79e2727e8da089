// host.restarted from the store's commits (status-events.ts; docs/pods.md, "A host that restarted"), on a
// real embedded store: the first boot id read is no event, a changed one is, and a deleted host's boot id
// is forgotten with it, so a host record written again under the same id starts over (its first boot id
// is no restart of the deleted one).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { EventLog } from '../../../../core/observability/events/event-log.ts';
import { recordStatusEvents } from '../../../../core/observability/events/status-events.ts';
import { LowdbStore } from '../../../../store/embedded/lowdb-store.ts';
import { fakeHostRecord } from '../../../harness/fake-hosts.ts';

const BOOT = ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000003'];
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

test("a deleted host's boot id is forgotten: the same id written again starts over, no host.restarted", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-status-events-'));
  const store = await LowdbStore.open({ dir, snapshotIntervalMs: 3_600_000, fsync: false });
  const log = new EventLog();
  const stop = await recordStatusEvents(store, log);
  cleanup.push(async () => {
    stop();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const host = { ...fakeHostRecord({ id: 'host_boot1' }), bootId: BOOT[0] };
  const put = (bootId: string) => store.transact(async (tx) => tx.put('hosts', { ...host, bootId }));
  const restarted = () => log.forResource(host.id).filter((e) => e.type === 'host.restarted');

  await put(BOOT[0]!);
  expect(restarted()).toHaveLength(0);
  await put(BOOT[1]!);
  expect(restarted()).toHaveLength(1);
  expect(restarted()[0]!.reason).toContain(BOOT[0]);

  await store.transact(async (tx) => tx.delete('hosts', host.id));
  expect(log.forResource(host.id).map((e) => e.type)).toContain('host.removed');
  await put(BOOT[2]!);
  expect(restarted()).toHaveLength(1);
});
