// GET /readyz (issue 13): public, 200 when the store takes writes and the provisioner's loop runs
// (where it is enabled), else 503 problem+json naming what is not ready. Each fault is made to
// happen, then the probe is asked.
import { afterEach, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { provisioner } from '../../provisioner/index.ts';
import type { Services } from '../../core/index.ts';
import { itEmbeddedOnly } from '../harness/embedded-only.ts';

let cp: TestControlPlane | undefined;
afterEach(async () => {
  await cp?.close();
  cp = undefined;
});

interface Readyz {
  status: number;
  type: string | null;
  body: { ready?: boolean; checks: Record<string, string>; detail?: string; status?: number };
}

async function readyz(): Promise<Readyz> {
  const res = await fetch(`${cp!.url}/readyz`);
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Readyz['body'] };
}

describe('GET /readyz', () => {
  test('answers 200 without a key when the store and the job queue are writable and no provisioner is configured', async () => {
    cp = await startTestControlPlane();
    const r = await readyz();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ready: true, checks: { store: 'ok', jobs: 'ok' } });
  });

  // the embedded store runs one transaction at a time, so one held write wedges it; PostgreSQL runs
  // them side by side (its readiness while the database is down: test/api/postgres-replicas.test.ts)
  itEmbeddedOnly('is 503 naming the store while a write holds the store past the probe deadline, and 200 once it ends', async () => {
    cp = await startTestControlPlane();
    let release: () => void = () => undefined;
    const held = cp.services.store.transact(() => new Promise<void>((r) => (release = r)));
    const started = Date.now();
    const r = await readyz();
    expect(Date.now() - started).toBeLessThan(5_000); // the probe answers; it does not hang with the store
    expect(r.status).toBe(503);
    expect(r.type).toMatch(/^application\/problem\+json/);
    expect(r.body.status).toBe(503);
    expect(r.body.detail).toContain('store');
    expect(r.body.checks.store).toMatch(/no answer within/);
    release();
    await held;
    expect((await readyz()).status).toBe(200);
  });

  test('is 503 naming the store once the store is closed', async () => {
    cp = await startTestControlPlane();
    await cp.services.store.close();
    const r = await readyz();
    expect(r.status).toBe(503);
    expect(r.body.checks.store).toMatch(/closed/);
  });

  test('is 503 naming the provisioner when it is enabled but has not started, 200 while its loop runs, 503 once it stops', async () => {
    let startProvisioner: () => Promise<void> = async () => undefined;
    let stopProvisioner: () => Promise<void> = async () => undefined;
    cp = await startTestControlPlane({
      // enabled (config.provisioner) but started by the test, so each state can be probed
      background: [
        async (services: Services) => {
          startProvisioner = async () => {
            stopProvisioner = await provisioner()(services);
          };
          return async () => stopProvisioner();
        },
      ],
    });
    const before = await readyz();
    expect(before.status).toBe(503);
    expect(before.body.checks).toEqual({ store: 'ok', jobs: 'ok', provisioner: 'the provisioner has not started yet' });
    expect(before.body.detail).toContain('provisioner');
    await startProvisioner();
    expect(await readyz()).toMatchObject({ status: 200, body: { ready: true, checks: { store: 'ok', provisioner: 'ok' } } });
    await stopProvisioner();
    const after = await readyz();
    expect(after.status).toBe(503);
    expect(after.body.checks.provisioner).toBe('the reconcile loop is stopped');
  });
});
