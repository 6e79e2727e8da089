// A full disk, for real: the data directory on a small tmpfs that the test fills until the kernel
// answers ENOSPC, then frees. A write that cannot reach the journal fails with STORE_UNAVAILABLE
// (503), is logged, leaves nothing of itself in memory or on disk (no reader ever saw it), and the
// store goes on by itself once there is space again; a restart replays every acknowledged write and
// no refused one.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { GpufleetError } from '../../model/base/errors.ts';
import { LowdbStore } from '../../store/embedded/lowdb-store.ts';
import { scanJournal } from '../../store/embedded/journal-scan.ts';
import { ADMIN_KEY, freePort, spawnControlPlane, type SpawnedControlPlane } from '../harness/control-plane.ts';
import { account } from './journal-helpers.ts';
import { canMount, mountSmallFs, type SmallFs } from './small-fs.ts';

let fs: SmallFs | undefined;
const stop: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of stop.splice(0).reverse()) await f().catch(() => undefined);
  await fs?.unmount();
  fs = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** a record whose journal line is far larger than what a filled tmpfs leaves in a file's last page */
const big = (id: string) => ({ ...account(id), name: 'x'.repeat(256 * 1024) });

describe.skipIf(!canMount)('store on a full disk', () => {
  test('a failed journal write fails its transactions with STORE_UNAVAILABLE, no reader ever sees them, and the store recovers when space frees', async () => {
    fs = await mountSmallFs(4);
    const dir = path.join(fs.dir, 'data');
    const errors: GpufleetError[] = [];
    const s = await LowdbStore.open({ dir, snapshotIntervalMs: 3_600_000, onNotice: () => undefined, onError: (e) => errors.push(e) });
    const committed: string[] = [];
    s.onCommit((changes) => committed.push(...changes.map((c) => c.id)));
    // what an index that transactions read (the placer) is told: each staged version, then the take-back
    const staged: string[] = [];
    s.onStage((changes) => staged.push(...changes.map((c) => `${c.id}:${c.deleted ? 'gone' : 'put'}`)));
    await s.transact((tx) => tx.put('accounts', account('before')));

    await fs.fill();
    // three transactions at once: one whose line does not fit, one appended while it is being
    // written, and one that read the first (through the pending layer) and writes after the failure
    const refused = [
      s.transact((tx) => tx.put('accounts', big('big'))),
      s.transact((tx) => tx.put('accounts', account('small'))),
      s.transact(async (tx) => {
        const read = await tx.get('accounts', 'big');
        await sleep(100);
        tx.put('accounts', { ...account('dependent'), name: String(read?.id) });
      }),
    ];
    // readers outside transactions look on every turn of the event loop until all three settle
    let settled = false;
    const results = Promise.allSettled(refused).finally(() => (settled = true));
    const seen = new Set<string>();
    while (!settled) {
      for (const a of await s.list('accounts')) seen.add(a.id);
      await new Promise((r) => setImmediate(r));
    }
    expect([...seen]).toEqual(['before']);
    const [r1, r2, r3] = await results;
    expect(r1).toMatchObject({ status: 'rejected', reason: { code: 'STORE_UNAVAILABLE', status: 503, fields: { errno: 'ENOSPC' } } });
    expect(r2).toMatchObject({ status: 'rejected', reason: { code: 'STORE_UNAVAILABLE' } });
    expect(r3).toMatchObject({ status: 'rejected', reason: { code: 'STORE_UNAVAILABLE' } });
    // told once, with the cause; listeners never heard of the refused writes
    expect(errors.map((e) => [e.code, e.fields.errno])).toEqual([['STORE_UNAVAILABLE', 'ENOSPC']]);
    expect((errors[0]!.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(committed).toEqual(['before']);
    // the dependent transaction stages only if the failing write is still under way after its 100 ms
    // (a loaded machine): either way every refused version staged is taken back, after it was staged
    expect(staged.slice(0, 3)).toEqual(['before:put', 'big:put', 'small:put']);
    const refusedPuts = staged.filter((x) => x.endsWith(':put') && x !== 'before:put').map((x) => x.split(':')[0]);
    expect(refusedPuts.slice(0, 2)).toEqual(['big', 'small']);
    for (const id of refusedPuts) expect(staged.indexOf(`${id}:gone`), id).toBeGreaterThan(staged.indexOf(`${id}:put`));
    expect(staged.filter((x) => x.endsWith(':gone')).sort()).toEqual(refusedPuts.map((id) => `${id}:gone`).sort());
    // a transaction sees the state before them too
    expect(await s.transact(async (tx) => (await tx.list('accounts')).map((a) => a.id))).toEqual(['before']);
    // and the journal holds no trace of them: no torn line, no refused record
    const scan = await scanJournal(path.join(dir, 'journal'), 0);
    expect(scan.damage).toBeNull();
    expect(scan.entries.flatMap((e) => e.ops.map((o) => o.id))).toEqual(['before']);

    // still full: refused again, and said so again (not a silent refusal from then on)
    await expect(s.transact((tx) => tx.put('accounts', big('still-full')))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(errors).toHaveLength(2);

    await fs.free();
    await s.transact((tx) => tx.put('accounts', big('after')));
    expect((await s.list('accounts')).map((a) => a.id).sort()).toEqual(['after', 'before']);
    expect(committed).toEqual(['before', 'after']);

    // a crash now (the store is never closed): a second store on the directory replays the journal
    const again = await LowdbStore.open({ dir, snapshotIntervalMs: 3_600_000, onNotice: () => undefined });
    stop.push(() => again.close());
    expect((await again.list('accounts')).map((a) => a.id).sort()).toEqual(['after', 'before']);
  });
});

describe.skipIf(!canMount)('snapshot on a full disk', () => {
  test('a snapshot that cannot be written is logged, leaves no temp file behind, and is written once there is room', async () => {
    fs = await mountSmallFs(4);
    const dir = path.join(fs.dir, 'data');
    const errors: GpufleetError[] = [];
    const s = await LowdbStore.open({ dir, snapshotIntervalMs: 500, onNotice: () => undefined, onError: (e) => errors.push(e) });
    stop.push(() => s.close());
    await s.transact((tx) => tx.put('accounts', account('a1')));
    await fs.fill(); // before the snapshot timer fires
    for (let i = 0; i < 50 && errors.length === 0; i++) await sleep(100);
    expect(errors.map((e) => e.code)).toEqual(['STORE_UNAVAILABLE']);
    expect(errors[0]!.message).toMatch(/could not write its snapshot .*no space left on device/);
    expect(existsSync(path.join(dir, '.gpufleet.json.tmp'))).toBe(false);
    await fs.free();
    await s.transact((tx) => tx.put('accounts', account('a2')));
    for (let i = 0; i < 50 && !snapshotHas(dir, 'a2'); i++) await sleep(100);
    expect(snapshotHas(dir, 'a2')).toBe(true);
  });
});

function snapshotHas(dir: string, id: string): boolean {
  try {
    const snap = JSON.parse(readFileSync(path.join(dir, 'gpufleet.json'), 'utf8')) as { collections: Record<string, Record<string, unknown>> };
    return snap.collections.accounts?.[id] !== undefined;
  } catch {
    return false;
  }
}

describe.skipIf(!canMount)('control plane on a full disk', () => {
  const SLOW = { timeout: 120_000 };

  async function call(cp: SpawnedControlPlane, p: string, init: { method?: string; json?: unknown; key?: string } = {}) {
    const headers: Record<string, string> = { authorization: `Bearer ${init.key ?? ADMIN_KEY}` };
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    return fetch(cp.url + p, { method: init.method ?? 'GET', headers, ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}) });
  }
  const template = (name: string) => ({ name, image: 'busybox:1.36', env: { PAYLOAD: 'x'.repeat(32_000) } });
  async function templateNames(cp: SpawnedControlPlane, key?: string): Promise<string[]> {
    const res = await call(cp, '/v2/templates', key ? { key } : {});
    expect(res.status).toBe(200);
    return ((await res.json()) as { templates: { name: string }[] }).templates.map((t) => t.name).sort();
  }

  test('a write answers 503 STORE_UNAVAILABLE problem+json and is logged; reads show the state before it; freed, writes go on; a SIGKILL restart replays every acknowledged write and no refused one', SLOW, async () => {
    fs = await mountSmallFs(8);
    const dataDir = path.join(fs.dir, 'data');
    const env = { GPUFLEET_PROVISIONER: 'off' };
    let cp = await spawnControlPlane({ dataDir, port: await freePort(), env });
    stop.push(() => cp.kill('SIGKILL'));
    expect((await call(cp, '/v2/templates', { method: 'POST', json: template('before') })).status).toBe(201);
    // a second key, never used yet: its first request will want to record lastUsedAt on the full disk
    const keyRes = await call(cp, '/v2/keys', { method: 'POST', json: { name: 'reader', scope: 'read' } });
    expect(keyRes.status, await keyRes.clone().text()).toBe(201);
    const readerKey = ((await keyRes.json()) as { key: string }).key;

    await fs.fill();
    const refused = await call(cp, '/v2/templates', { method: 'POST', json: template('refused') });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await refused.json()) as { code: string; status: number; title: string; detail: string };
    expect(problem).toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503, title: 'Service Unavailable' });
    expect(problem.detail).toContain('no space left on device');
    // reads go on, and show the state before the refused write (also for a key whose use cannot be recorded now)
    expect(await templateNames(cp)).toEqual(['before']);
    expect(await templateNames(cp, readerKey)).toEqual(['before']);
    // logged, with the registry code and the cause
    const logged = cp
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { code?: string; errno?: string; msg?: string });
    expect(logged.filter((l) => l.code === 'STORE_UNAVAILABLE' && l.errno === 'ENOSPC').length).toBeGreaterThan(0);

    await fs.free();
    expect((await call(cp, '/v2/templates', { method: 'POST', json: template('after') })).status).toBe(201);
    expect(await templateNames(cp)).toEqual(['after', 'before']);

    await cp.kill('SIGKILL');
    cp = await spawnControlPlane({ dataDir, port: await freePort(), env });
    expect(await templateNames(cp)).toEqual(['after', 'before']);
  });
});
