// Events survive a restart (docs/events.md, "Retention"): a listening control plane on its own data
// dir, closed and started again on it; and the archive file under a small retention, read back.
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { EventLog } from '../../core/observability/events/event-log.ts';
import { EVENTS_FILE, FileEventArchive } from '../../core/observability/events/event-archive.ts';
import type { EventView } from '../../model/records/event.ts';
import { readSse } from '../harness/sse-reader.ts';

const UNLIMITED = 'minute=100000000,hour=100000000,day=100000000';
let dataDir: string;
let cp: TestControlPlane;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-ev-persist-'));
  cp = await startTestControlPlane({ dataDir, rateLimits: UNLIMITED });
  await seedHosts(cp.services.store, [{ id: 'evp-gpu', gpus: 8, dataCenterId: 'dc-evp' }]);
});
afterAll(async () => {
  await cp?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const eventsOf = async (key: string, id: string) => {
  const res = await cp.api(`/v2/events?resourceId=${id}`, { key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: EventView[] }).events;
};
const act = async (key: string, id: string, action: string) => {
  const res = await cp.api(`/v2/pods/${id}/action`, { key, method: 'POST', json: { action } });
  expect(res.status, `${action}: ${res.status}`).toBeLessThan(300);
};

describe('events across a restart', () => {
  test("a pod's events survive a control-plane restart; new ones follow them, and an earlier run's Last-Event-ID resumes", async () => {
    const user = await cp.newAccount('read_write');
    const res = await cp.api('/v2/pods', { key: user.key, method: 'POST', json: { name: 'evp', image: 'busybox:1.36', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 }, disk: 5 } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    await act(user.key, id, 'stop');
    await act(user.key, id, 'start');
    const before = await eventsOf(user.key, id);
    expect(before.map((e) => e.status)).toEqual(['PROVISIONING', 'EXITED', 'PROVISIONING']);

    await cp.close();
    cp = await startTestControlPlane({ dataDir, rateLimits: UNLIMITED });
    const after = await eventsOf(user.key, id);
    expect(after).toEqual(before);
    // the pod view's last events too
    expect(((await (await cp.api(`/v2/pods/${id}`, { key: user.key })).json()) as { events: EventView[] }).events).toEqual(before);
    // the restart itself is no event (the statuses did not change); the next change follows the old ones
    await act(user.key, id, 'stop');
    const more = await eventsOf(user.key, id);
    expect(more.slice(0, 3)).toEqual(before);
    expect(more.map((e) => e.status)).toEqual(['PROVISIONING', 'EXITED', 'PROVISIONING', 'EXITED']);
    // resuming a follow with the id of the earlier run's second event sends the two after it only
    const s = await readSse(`${cp.url}/v2/events?resourceId=${id}`, {
      headers: { authorization: `Bearer ${user.key}`, accept: 'text/event-stream', 'last-event-id': before[1]!.id },
    });
    try {
      const got = [await s.next(5_000), await s.next(5_000)].map((e) => e.id);
      expect(got).toEqual([before[2]!.id, more[3]!.id]);
      await expect(s.next(1_000)).rejects.toThrow(/no event/);
    } finally {
      s.close();
    }
  });
});

describe('event archive retention', () => {
  test('the file stays within twice the retention, and reads back to what the log kept, per resource and in all', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-ev-archive-'));
    try {
      const retention = { perResource: 3, total: 5 };
      const log = new EventLog(retention);
      await log.useArchive(new FileEventArchive(dir, retention.total));
      const add = (l: EventLog, resourceId: string, status: string) =>
        l.append({ resourceType: 'pod', resourceId, accountId: 'a', type: `pod.${status}`, status, previousStatus: null, reason: null, actor: 'system' });
      for (let i = 0; i < 40; i++) {
        add(log, `p${i % 2}`, String(i));
        // several write batches, so the file grows past the bound and is compacted in between
        if (i % 7 === 0) await new Promise((r) => setImmediate(r));
      }
      await log.close();
      const lines = (await readFile(path.join(dir, EVENTS_FILE), 'utf8')).split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThanOrEqual(retention.total);
      expect(lines.length).toBeLessThanOrEqual(2 * retention.total);
      expect((await stat(path.join(dir, EVENTS_FILE))).mode & 0o777).toBe(0o600);

      // a line cut by a crash is skipped, and the next event starts a line of its own
      await appendFile(path.join(dir, EVENTS_FILE), '{"id":"cut-1","se');
      const again = new EventLog(retention);
      await again.useArchive(new FileEventArchive(dir, retention.total));
      expect(again.all()).toEqual(log.all());
      expect(again.all().map((e) => e.status)).toEqual(['35', '36', '37', '38', '39']);
      expect(again.forResource('p1').map((e) => e.status)).toEqual(['35', '37', '39']);
      const next = add(again, 'p0', 'after');
      expect(next.seq).toBe(41);
      await again.close();
      const third = new EventLog(retention);
      await third.useArchive(new FileEventArchive(dir, retention.total));
      expect(third.all().map((e) => e.status)).toEqual(['36', '37', '38', '39', 'after']);
      await third.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
