// What the PostgreSQL store adds to the Store contract (store-contract.test.ts): commits heard by the
// other replicas, the GPU claim rows, the secret key check, migrations under concurrent starts, and the
// database dying under it and coming back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodRecord } from '../../model/index.ts';
import { MIGRATIONS, PgStore, SecretBox, type StoreChange } from '../../store/index.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { waitFor } from '../harness/wait-for.ts';

const KEY = Buffer.alloc(32, 5);
const open = (url: string, over: Partial<Parameters<typeof PgStore.open>[0]> = {}) =>
  PgStore.open({ url, secretBox: SecretBox.fromKey(KEY), onNotice: () => undefined, onError: () => undefined, ...over });

const gpuPod = (id: string, hostId: string, gpuUuids: string[]): PodRecord =>
  ({ id, accountId: 'acct_x', name: id, hostId, gpuUuids, allocated: true, env: {} }) as unknown as PodRecord;

let cluster: TestPostgres;
beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);
afterAll(async () => cluster?.stop());

describe('PostgreSQL store across replicas', () => {
  it("a commit on one replica reaches the other's onCommit listeners, with its record and actor, without a poll", async () => {
    const url = await cluster.createDatabase();
    const [a, b] = await Promise.all([open(url), open(url)]);
    try {
      const heard: { changes: StoreChange[]; actor: string | undefined }[] = [];
      b.onCommit((changes, commit) => heard.push({ changes, actor: commit.actor }));
      const started = Date.now();
      await a.transact((tx) => tx.put('pods', gpuPod('pod_1', 'host_1', ['GPU-1'])), { actor: 'user:key_1' });
      await waitFor('the other replica hears the commit', async () => heard.length > 0, 2_000, 10);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(heard[0]).toMatchObject({ actor: 'user:key_1', changes: [{ collection: 'pods', id: 'pod_1', deleted: false, record: { hostId: 'host_1' } }] });
      await a.transact((tx) => tx.delete('pods', 'pod_1'));
      await waitFor('the other replica hears the delete', async () => heard.length > 1, 2_000, 10);
      expect(heard[1]?.changes).toEqual([{ collection: 'pods', id: 'pod_1', deleted: true }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('one GPU is never claimed twice: concurrent pods on the same GPU from two replicas, one commits, the other gets CAPACITY_UNAVAILABLE', async () => {
    const url = await cluster.createDatabase();
    const [a, b] = await Promise.all([open(url), open(url)]);
    try {
      const results = await Promise.allSettled([
        a.transact((tx) => tx.put('pods', gpuPod('pod_a', 'host_1', ['GPU-0', 'GPU-1']))),
        b.transact((tx) => tx.put('pods', gpuPod('pod_b', 'host_1', ['GPU-1']))),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toMatchObject({ code: 'CAPACITY_UNAVAILABLE', status: 400 });
      const { rows } = await a.pool.query<{ owner_id: string }>('SELECT DISTINCT owner_id FROM gf_gpu_claims');
      expect(rows).toHaveLength(1);
      expect(await a.count('pods')).toBe(1);
      // stopping the winner frees its GPUs (allocated false drops the claims); the other may take them
      const winner = rows[0]!.owner_id;
      await a.transact(async (tx) => tx.put('pods', { ...(await tx.get('pods', winner))!, allocated: false }));
      await b.transact((tx) => tx.put('pods', gpuPod('pod_c', 'host_1', ['GPU-1'])));
      expect((await a.pool.query('SELECT owner_id FROM gf_gpu_claims')).rows).toEqual([{ owner_id: 'pod_c' }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses text jsonb cannot hold (a NUL, an unpaired surrogate) as a 422 naming where it is, not a database error', async () => {
    const a = await open(await cluster.createDatabase());
    try {
      const rec = { ...gpuPod('pod_u', 'host_1', []), tags: { t: 'x\ud800' } };
      await expect(a.transact((tx) => tx.put('pods', rec as PodRecord))).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        status: 422,
        errors: [expect.stringMatching(/^\$\.tags\.t: /)],
      });
      // inside env it is sealed first, so it is kept
      await a.transact((tx) => tx.put('pods', { ...gpuPod('pod_v', 'host_1', []), env: { K: 'a\u0000\ud800' } } as PodRecord));
      expect((await a.get('pods', 'pod_v'))?.env).toEqual({ K: 'a\u0000\ud800' });
    } finally {
      await a.close();
    }
  });

  it('a bug in the commit step (a record JSON cannot write) fails that transaction as it is; the store is not taken for down', async () => {
    const a = await open(await cluster.createDatabase());
    try {
      // JSON.stringify throws a TypeError in the statement that writes the rows, before any statement runs
      const rec = { ...gpuPod('pod_big', 'host_1', []), tags: { n: 1n } };
      await expect(a.transact((tx) => tx.put('pods', rec as unknown as PodRecord))).rejects.toThrow(TypeError);
      expect(a.writeBlocker()).toBeNull();
      await a.transact((tx) => tx.put('pods', gpuPod('pod_after', 'host_1', [])));
      expect(await a.get('pods', 'pod_big')).toBeUndefined();
      expect((await a.get('pods', 'pod_after'))?.id).toBe('pod_after');
    } finally {
      await a.close();
    }
  });

  it('applies the migrations once when several replicas start together on an empty database', async () => {
    const url = await cluster.createDatabase();
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(url)));
    try {
      const { rows } = await stores[0]!.pool.query<{ version: number }>('SELECT version FROM gf_schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('refuses to start with a key that does not open the database, and without the migrations when told not to apply them', async () => {
    const url = await cluster.createDatabase();
    await expect(open(url, { migrate: false })).rejects.toThrow(/gpufleet db migrate/);
    const first = await open(url);
    await first.close();
    await expect(open(url, { secretBox: SecretBox.fromKey(Buffer.alloc(32, 6)) })).rejects.toThrow(/GPUFLEET_SECRET_KEY does not open/);
    const again = await open(url);
    await again.close();
  });
});

describe('PostgreSQL store when the database goes away', () => {
  it('fails fast with STORE_UNAVAILABLE while the database is down, keeps every acknowledged write, and resumes when it is back', async () => {
    const url = await cluster.createDatabase();
    const errors: string[] = [];
    const [a, b] = await Promise.all([open(url, { onError: (e) => errors.push(e.code) }), open(url)]);
    try {
      const acknowledged: string[] = [];
      for (let i = 0; i < 20; i++) {
        await a.transact((tx) => tx.put('pods', gpuPod(`pod_${i}`, 'host_1', [])));
        acknowledged.push(`pod_${i}`);
      }
      await cluster.kill();
      // the first use finds it gone; from then on writeBlocker says so without I/O
      await expect(a.transact((tx) => tx.put('pods', gpuPod('pod_down', 'host_1', [])))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });
      expect(a.writeBlocker()).toMatch(/cannot be reached/);
      await expect(a.get('pods', 'pod_0')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(errors).toContain('STORE_UNAVAILABLE');
      await cluster.start();
      await waitFor('both stores see the database again', async () => a.writeBlocker() === null && b.writeBlocker() === null, 15_000, 50);
      for (const id of acknowledged) expect(await a.get('pods', id)).toBeDefined();
      expect(await a.get('pods', 'pod_down')).toBeUndefined();
      // the listening connections are back: a commit on one is heard by the other
      const heard: string[] = [];
      b.onCommit((changes) => heard.push(...changes.map((c) => c.id)));
      await a.transact((tx) => tx.put('pods', gpuPod('pod_after', 'host_1', [])));
      await waitFor('the commit after the restart is heard', async () => heard.includes('pod_after'), 5_000, 20);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it('the database dies while a transaction holds its connection between two statements: that transaction fails with STORE_UNAVAILABLE, nothing is thrown outside it', async () => {
    const url = await cluster.createDatabase();
    const a = await open(url);
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      await a.transact((tx) => tx.put('pods', gpuPod('pod_before', 'host_1', [])));
      let inside!: () => void;
      const holding = new Promise<void>((r) => (inside = r));
      let killed!: () => void;
      const dead = new Promise<void>((r) => (killed = r));
      const tx = a.transact(async (t) => {
        await t.get('pods', 'pod_before'); // a statement ran: the connection is lent to this transaction
        inside();
        // the database dies here, between two statements: the transaction goes on only once it is dead
        // (a fixed pause could end before a loaded machine had killed it), and once the broken
        // connection has had a moment to tell its 'error'
        await dead;
        await new Promise((r) => setTimeout(r, 200));
        t.put('pods', gpuPod('pod_during', 'host_1', []));
      });
      await holding;
      await cluster.kill().finally(killed);
      await expect(tx).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });
      // the broken connection's 'error' event arrived while it was lent out: handled, not uncaught
      await new Promise((r) => setTimeout(r, 200));
      expect(uncaught).toEqual([]);
      await cluster.start();
      await waitFor('the store sees the database again', async () => a.writeBlocker() === null, 15_000, 50);
      expect(await a.get('pods', 'pod_during')).toBeUndefined();
      expect(await a.get('pods', 'pod_before')).toBeDefined();
    } finally {
      process.off('uncaughtException', onUncaught);
      await a.close();
    }
  }, 60_000);
});
