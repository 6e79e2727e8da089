// The Store contract, one set of tests run against both implementations: the embedded store
// (lowdb + journal) and PostgreSQL (store/pg) on a real cluster of the test's own.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpufleetError, type AccountRecord, type PodRecord } from '../../model/index.ts';
import { LowdbStore, PgStore, SecretBox, type Store, type StoreChange } from '../../store/index.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';

const KEY = Buffer.alloc(32, 3);

interface Impl {
  name: string;
  open(): Promise<Store>;
}

let cluster: TestPostgres;
const dirs: string[] = [];

beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const impls: Impl[] = [
  {
    name: 'embedded (lowdb + journal)',
    async open() {
      const dir = await mkdtemp(path.join(tmpdir(), 'gf-contract-'));
      dirs.push(dir);
      return LowdbStore.open({ dir, secretBox: SecretBox.fromKey(KEY), snapshotIntervalMs: 3_600_000, onNotice: () => undefined });
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      return PgStore.open({ url: await cluster.createDatabase(), secretBox: SecretBox.fromKey(KEY), onNotice: () => undefined });
    },
  },
];

const account = (id: string, over: Partial<AccountRecord> = {}): AccountRecord => ({
  id,
  email: `${id}@test.local`,
  name: id,
  operator: false,
  balance: 0,
  pubKey: '',
  createdAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe.each(impls)('Store contract: $name', (impl) => {
  let store: Store;
  beforeAll(async () => {
    store = await impl.open();
  }, 60_000);
  afterAll(async () => store?.close());

  it('puts, gets, lists with equality filters and counts; records come back frozen', async () => {
    await store.transact((tx) => {
      tx.put('accounts', account('acct_a', { operator: true, balance: 5 }));
      tx.put('accounts', account('acct_b', { balance: 5 }));
      tx.put('accounts', account('acct_c', { balance: 7 }));
    });
    const a = await store.get('accounts', 'acct_a');
    expect(a).toMatchObject({ id: 'acct_a', operator: true });
    expect(Object.isFrozen(a)).toBe(true);
    expect(await store.get('accounts', 'acct_missing')).toBeUndefined();
    expect((await store.list('accounts', { balance: 5 })).map((r) => r.id).sort()).toEqual(['acct_a', 'acct_b']);
    expect((await store.list('accounts', { balance: 5, operator: false })).map((r) => r.id)).toEqual(['acct_b']);
    expect(await store.count('accounts', { operator: true })).toBe(1);
    // an undefined filter value is no filter; a string never equals a number
    expect(await store.count('accounts', { operator: undefined, balance: 7 })).toBe(1);
    expect(await store.count('accounts', { balance: '7' as never })).toBe(0);
  });

  it('a transaction reads its own writes (get, filtered list, count) and nothing of it changes when it throws', async () => {
    await expect(
      store.transact(async (tx) => {
        tx.put('accounts', account('acct_t', { balance: 99 }));
        expect((await tx.get('accounts', 'acct_t'))?.balance).toBe(99);
        expect((await tx.list('accounts', { balance: 99 })).map((r) => r.id)).toEqual(['acct_t']);
        tx.delete('accounts', 'acct_a');
        expect(await tx.get('accounts', 'acct_a')).toBeUndefined();
        expect(await tx.count('accounts', { operator: true })).toBe(0);
        throw new GpufleetError('CONFLICT', 'no');
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await store.get('accounts', 'acct_t')).toBeUndefined();
    expect(await store.get('accounts', 'acct_a')).toBeDefined();
  });

  it('concurrent read-modify-write transactions lose no update (serialisable)', async () => {
    await store.transact((tx) => tx.put('accounts', account('acct_counter')));
    await Promise.all(
      Array.from({ length: 24 }, () =>
        store.transact(async (tx) => {
          const cur = (await tx.get('accounts', 'acct_counter'))!;
          await new Promise((r) => setTimeout(r, 1));
          tx.put('accounts', { ...cur, balance: cur.balance + 1 });
        }),
      ),
    );
    expect((await store.get('accounts', 'acct_counter'))?.balance).toBe(24);
  }, 60_000);

  it('check-then-insert under concurrency admits one (the uniqueness checks of names and keys)', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.transact(async (tx) => {
          if ((await tx.list('accounts', { email: 'unique@test.local' })).length > 0) throw new GpufleetError('CONFLICT', 'taken');
          tx.put('accounts', account(`acct_u${i}`, { email: 'unique@test.local' }));
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await store.count('accounts', { email: 'unique@test.local' })).toBe(1);
  }, 60_000);

  it('announces each commit once it is durable, with its actor and records, and never a failed one', async () => {
    const heard: { changes: StoreChange[]; actor: string | undefined }[] = [];
    const stop = store.onCommit((changes, commit) => heard.push({ changes, actor: commit.actor }));
    await store.transact((tx) => tx.put('accounts', account('acct_n', { balance: 1 })), { actor: 'operator' });
    // announced before transact resolved
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatchObject({ actor: 'operator', changes: [{ collection: 'accounts', id: 'acct_n', deleted: false, record: { balance: 1 } }] });
    await store.transact((tx) => tx.delete('accounts', 'acct_n'));
    expect(heard[1]?.changes).toEqual([{ collection: 'accounts', id: 'acct_n', deleted: true }]);
    await store
      .transact((tx) => {
        tx.put('accounts', account('acct_never'));
        throw new Error('fails');
      })
      .catch(() => undefined);
    expect(heard).toHaveLength(2);
    stop();
  });

  it('keeps env values sealed at rest and plain in memory', async () => {
    const pod = { id: 'pod_env', accountId: 'acct_a', env: { TOKEN: 'very-secret-value' } } as unknown as PodRecord;
    await store.transact((tx) => tx.put('pods', pod));
    expect((await store.get('pods', 'pod_env'))?.env).toEqual({ TOKEN: 'very-secret-value' });
    if (store instanceof PgStore) {
      const { rows } = await store.pool.query<{ data: string }>("SELECT data::text AS data FROM gf_pods WHERE id = 'pod_env'");
      expect(rows[0]?.data).toContain('$sealed');
      expect(rows[0]?.data).not.toContain('very-secret-value');
    }
  });

  it('a filter or an id holding a NUL or an unpaired surrogate matches nothing (and is no error)', async () => {
    expect(await store.list('accounts', { email: 'a\u0000b' })).toEqual([]);
    expect(await store.count('accounts', { name: '\ud800' })).toBe(0);
    expect(await store.get('accounts', 'acct_\u0000')).toBeUndefined();
    expect(await store.transact((tx) => tx.get('accounts', 'acct_\u0000'))).toBeUndefined();
  });

  it('reports no write blocker while healthy, and one once closed', async () => {
    expect(store.writeBlocker?.() ?? null).toBeNull();
    const other = await impl.open();
    await other.close();
    expect(other.writeBlocker?.()).toBe('the store is closed');
    await expect(other.transact(() => undefined)).rejects.toThrow();
  });
});
