// GET /readyz on a full disk (issue 18, item 8): the control plane's data directory is a 4 MiB tmpfs,
// filled up for real, so journal writes fail with ENOSPC. Before, the journal cut its files back
// after the failed write and /readyz answered 200 {"store":"ok"} while every write failed; now it is
// 503 naming the failed write until a write succeeds again, and 200 once space is back (its probe
// write finds out without any request writing). Needs `mount -t tmpfs` (root, small-fs.ts).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { TEST_STORE } from '../harness/test-store.ts';
import { waitFor } from '../harness/wait-for.ts';
import { canMount, mountSmallFs, type SmallFs } from './small-fs.ts';

const skip = TEST_STORE === 'postgres' || !canMount;
let fs: SmallFs | undefined;
let cp: TestControlPlane | undefined;

async function readyz(): Promise<{ status: number; body: { checks: Record<string, string> } }> {
  const res = await fetch(`${cp!.url}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
}

beforeAll(async () => {
  if (skip) return;
  fs = await mountSmallFs(4);
  cp = await startTestControlPlane({ dataDir: path.join(fs.dir, 'data') });
});
afterAll(async () => {
  await cp?.close().catch(() => undefined);
  await fs?.unmount();
});

// the embedded store's own disk; PostgreSQL's: docs/postgres.md
describe.skipIf(skip)('GET /readyz on a full disk', () => {
  test('a write refused with ENOSPC makes /readyz 503 naming the store, and it stays 503 (no write succeeds); space back: 200', async () => {
    expect((await readyz()).status).toBe(200);
    await fs!.fill();
    // a write now: the journal cannot append, the request is 503 and nothing of it is applied
    const res = await cp!.api('/v2/templates', { method: 'POST', json: { name: 'on-a-full-disk', image: 'busybox', args: 'x'.repeat(4000) } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE');
    const full = await readyz();
    expect(full.status).toBe(503);
    expect(full.body.checks.store).toMatch(/journal write failed.*(ENOSPC|no space)/i);
    // asked again later, the answer holds: the failed write was cut back, but the disk is still full
    await new Promise((r) => setTimeout(r, 300));
    expect((await readyz()).status).toBe(503);
    // space back: the probe write succeeds and the store is ready again, with no request writing
    await fs!.free();
    await waitFor('/readyz 200 once space is back', async () => (await readyz()).status === 200, 10_000, 100);
    expect((await readyz()).body.checks.store).toBe('ok');
    const after = await cp!.api('/v2/templates', { method: 'POST', json: { name: 'space-back', image: 'busybox' } });
    expect(after.status).toBe(201);
  }, 60_000);
});
