// The embedded store's contract (store/base/store.ts): all-or-nothing transactions that run one at a
// time, durable when they resolve; state restored after a clean close and after a crash (a second
// store opened on the directory of one that never closed); snapshots that drop journal segments.
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { LowdbStore } from '../../store/embedded/lowdb-store.ts';
import type { AccountRecord } from '../../model/records/account.ts';

const dirs: string[] = [];
const open: LowdbStore[] = [];

async function tempDir(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-store-'));
  dirs.push(d);
  return d;
}

async function openStore(dir: string, opts: { snapshotIntervalMs?: number; fsync?: boolean } = {}): Promise<LowdbStore> {
  // a long snapshot interval by default, so a crash test sees the journal alone
  const s = await LowdbStore.open({ dir, snapshotIntervalMs: opts.snapshotIntervalMs ?? 3_600_000, fsync: opts.fsync ?? true });
  open.push(s);
  return s;
}

afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function account(id: string, balance = 0): AccountRecord {
  return { id, email: `${id}@test.local`, name: id, operator: false, balance, pubKey: '', createdAt: '2024-01-01T00:00:00.000Z' };
}

const ids = (n: number, prefix = 'a') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);

async function journalFiles(dir: string): Promise<string[]> {
  return (await readdir(path.join(dir, 'journal'))).filter((f) => f.endsWith('.jsonl')).sort();
}

async function journalSeqs(dir: string): Promise<number[]> {
  const seqs: number[] = [];
  for (const f of await journalFiles(dir)) {
    const text = await readFile(path.join(dir, 'journal', f), 'utf8');
    // each line: `<crc32 hex> <JSON>`
    for (const line of text.split('\n')) if (line) seqs.push((JSON.parse(line.slice(line.indexOf(' ') + 1)) as { seq: number }).seq);
  }
  return seqs;
}

describe('transactions', () => {
  test('a transaction that throws changes nothing, in memory or on disk', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    await s.transact((tx) => tx.put('accounts', account('keep', 1)));
    const seen: string[] = [];
    s.onCommit((changes) => seen.push(...changes.map((c) => c.id)));
    await expect(
      s.transact(async (tx) => {
        tx.put('accounts', account('new1'));
        tx.put('accounts', { ...account('keep'), balance: 99 });
        tx.delete('accounts', 'keep');
        // reads inside see the transaction's own writes
        expect(await tx.get('accounts', 'new1')).toBeDefined();
        expect(await tx.get('accounts', 'keep')).toBeUndefined();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(seen).toEqual([]);
    expect(await s.get('accounts', 'new1')).toBeUndefined();
    expect((await s.get('accounts', 'keep'))?.balance).toBe(1);
    expect(await s.count('accounts')).toBe(1);
    // the store still works after a failed transaction
    await s.transact((tx) => tx.put('accounts', account('after')));
    expect(await s.count('accounts')).toBe(2);
    // and the failed one never reached the journal: a crash replay sees the same two records
    const replay = await openStore(dir);
    expect((await replay.list('accounts')).map((a) => a.id).sort()).toEqual(['after', 'keep']);
    expect((await replay.get('accounts', 'keep'))?.balance).toBe(1);
  });

  test('a transaction whose writes are all visible together, and none before it resolves', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = s.transact(async (t) => {
      t.put('accounts', account('x1'));
      await gate;
      t.put('accounts', account('x2'));
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(await s.get('accounts', 'x1')).toBeUndefined();
    release();
    await tx;
    expect(await s.get('accounts', 'x1')).toBeDefined();
    expect(await s.get('accounts', 'x2')).toBeDefined();
  });

  test('records are frozen: a reader cannot change the stored state', async () => {
    const s = await openStore(await tempDir());
    const rec = account('f');
    await s.transact((tx) => tx.put('accounts', rec));
    rec.balance = 1000; // the caller's object was copied
    const stored = await s.get('accounts', 'f');
    expect(stored?.balance).toBe(0);
    expect(() => {
      (stored as AccountRecord).balance = 5;
    }).toThrow();
  });

  test('concurrent transactions run one at a time (read-modify-write loses no update)', async () => {
    const s = await openStore(await tempDir());
    await s.transact((tx) => tx.put('accounts', account('counter', 0)));
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 200 }, async () =>
        s.transact(async (tx) => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          const cur = (await tx.get('accounts', 'counter'))!;
          await new Promise((r) => setImmediate(r)); // yield: another transaction would interleave here
          tx.put('accounts', { ...cur, balance: cur.balance + 1 });
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect((await s.get('accounts', 'counter'))?.balance).toBe(200);
  });

  test('a failing transaction does not block the ones queued behind it', async () => {
    const s = await openStore(await tempDir());
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        s.transact(async (tx) => {
          tx.put('accounts', account(`q${i}`));
          if (i % 3 === 0) throw new Error(`fail ${i}`);
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBe(13);
    expect(await s.count('accounts')).toBe(13);
    expect(await s.get('accounts', 'q0')).toBeUndefined();
    expect(await s.get('accounts', 'q1')).toBeDefined();
  });

  test('indexed and unindexed filters agree with a full scan, inside and outside transactions', async () => {
    const s = await openStore(await tempDir());
    await s.transact((tx) => {
      for (let i = 0; i < 30; i++)
        tx.put('apiKeys', {
          id: `k${i}`, accountId: `acct${i % 3}`, name: `n${i % 2}`, prefix: 'gf_', hash: `h${i}`,
          scope: 'read', expiresAt: null, revokedAt: null, lastUsedAt: null, createdAt: '2024-01-01T00:00:00Z',
        });
    });
    expect((await s.list('apiKeys', { accountId: 'acct1' })).length).toBe(10);
    expect((await s.list('apiKeys', { accountId: 'acct1', name: 'n0' })).length).toBe(5);
    expect((await s.list('apiKeys', { name: 'n1' })).length).toBe(15);
    expect(await s.count('apiKeys', { hash: 'h7' })).toBe(1);
    await s.transact(async (tx) => {
      const k = (await tx.get('apiKeys', 'k1'))!;
      tx.put('apiKeys', { ...k, accountId: 'acct2' });
      tx.delete('apiKeys', 'k4');
      expect((await tx.list('apiKeys', { accountId: 'acct1' })).map((r) => r.id).sort()).toEqual(
        ['k10', 'k13', 'k16', 'k19', 'k22', 'k25', 'k28', 'k7'].sort(),
      );
    });
    // the index followed the move and the delete
    expect((await s.list('apiKeys', { accountId: 'acct1' })).length).toBe(8);
    expect((await s.list('apiKeys', { accountId: 'acct2' })).length).toBe(11);
  });
});

describe('durability', () => {
  test('close and reopen restores every record, updates and deletes included', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    for (const id of ids(50)) await s.transact((tx) => tx.put('accounts', account(id, 1)));
    await s.transact((tx) => {
      tx.put('accounts', account('a00003', 42));
      tx.delete('accounts', 'a00007');
    });
    await s.close();
    await expect(s.transact(() => undefined)).rejects.toThrow(/closed/);
    const again = await openStore(dir);
    expect(await again.count('accounts')).toBe(49);
    expect((await again.get('accounts', 'a00003'))?.balance).toBe(42);
    expect(await again.get('accounts', 'a00007')).toBeUndefined();
    expect(Object.isFrozen(await again.get('accounts', 'a00000'))).toBe(true);
  });

  test('crash: every acknowledged transaction of a concurrent burst is on disk when it resolves', async () => {
    // Group commit under load: transactions keep committing while a write+fdatasync is in flight.
    // Each one is acknowledged only once its own journal line is durable; a second store opened on
    // the directory (the first never closed, never snapshotted) must see all of them.
    const dir = await tempDir();
    const s = await openStore(dir);
    const acked: string[] = [];
    await Promise.all(
      ids(400, 'c').map(async (id, i) => {
        if (i % 7 === 0) await new Promise((r) => setTimeout(r, i % 5)); // stagger arrivals
        await s.transact((tx) => tx.put('accounts', account(id, i)));
        acked.push(id);
      }),
    );
    expect(acked.length).toBe(400);
    // what is on disk now, with no further write to push pending lines out
    const seqs = await journalSeqs(dir);
    expect(seqs.length).toBe(400);
    const crashed = await openStore(dir);
    for (const id of acked) expect(await crashed.get('accounts', id), id).toBeDefined();
  });

  test('crash: acknowledged records survive without close; a torn last line is ignored', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    for (const id of ids(20)) await s.transact((tx) => tx.put('accounts', account(id)));
    await s.transact((tx) => tx.put('accounts', account('a00005', 55)));
    // simulate a crash mid-append: half a JSON line after the last acknowledged one
    const [seg] = await journalFiles(dir);
    expect(seg).toBeDefined();
    await appendFile(path.join(dir, 'journal', seg!), '{"seq":22,"ops":[{"c":"accounts","id":"torn","v":{"id":"to');
    const crashed = await openStore(dir);
    expect(await crashed.count('accounts')).toBe(20);
    expect((await crashed.get('accounts', 'a00005'))?.balance).toBe(55);
    expect(await crashed.get('accounts', 'torn')).toBeUndefined();
    // the reopened store keeps working and numbers on from the last good entry
    await crashed.transact((tx) => tx.put('accounts', account('post')));
    await crashed.close();
    const third = await openStore(dir);
    expect(await third.count('accounts')).toBe(21);
    expect(await third.get('accounts', 'post')).toBeDefined();
  });

  test('crash after a snapshot: snapshot plus later journal lines restore the state', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    for (const id of ids(10)) await s.transact((tx) => tx.put('accounts', account(id)));
    await s.snapshot();
    for (const id of ids(10, 'b')) await s.transact((tx) => tx.put('accounts', account(id)));
    await s.transact((tx) => tx.delete('accounts', 'a00000'));
    const crashed = await openStore(dir);
    expect(await crashed.count('accounts')).toBe(19);
    expect(await crashed.get('accounts', 'a00000')).toBeUndefined();
    expect(await crashed.get('accounts', 'b00009')).toBeDefined();
  });

  test('an unreadable snapshot is an error, not an empty store', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    await s.transact((tx) => tx.put('accounts', account('x')));
    await s.close();
    await writeFile(path.join(dir, 'gpufleet.json'), '{"seq": 1, "collections": {"acc');
    await expect(LowdbStore.open({ dir })).rejects.toThrow();
  });
});

describe('snapshots', () => {
  test('a snapshot drops the journal segments it covers', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    for (const id of ids(30)) await s.transact((tx) => tx.put('accounts', account(id)));
    const before = await journalFiles(dir);
    expect(before.length).toBeGreaterThan(0);
    await s.snapshot();
    const after = await journalFiles(dir);
    for (const f of before) expect(after).not.toContain(f);
    expect(await journalSeqs(dir)).toEqual([]);
    const snap = JSON.parse(await readFile(path.join(dir, 'gpufleet.json'), 'utf8')) as { seq: number; collections: { accounts: object } };
    expect(snap.seq).toBe(30);
    expect(Object.keys(snap.collections.accounts).length).toBe(30);
    // writes after the snapshot go to a new segment, which holds only them
    await s.transact((tx) => tx.put('accounts', account('later')));
    expect(await journalSeqs(dir)).toEqual([31]);
    const crashed = await openStore(dir);
    expect(await crashed.count('accounts')).toBe(31);
  });

  test('the timer snapshots on its own and the journal shrinks', async () => {
    const dir = await tempDir();
    const s = await openStore(dir, { snapshotIntervalMs: 50 });
    for (const id of ids(25)) await s.transact((tx) => tx.put('accounts', account(id)));
    const deadline = Date.now() + 5000;
    while ((await journalSeqs(dir)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await journalSeqs(dir)).toEqual([]);
    const crashed = await openStore(dir);
    expect(await crashed.count('accounts')).toBe(25);
  });

  test('recovery snapshots the replayed journal and leaves no covered segment behind', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    for (const id of ids(15)) await s.transact((tx) => tx.put('accounts', account(id)));
    const crashed = await openStore(dir); // replays 15 lines, then snapshots them
    expect(await crashed.count('accounts')).toBe(15);
    expect(await journalSeqs(dir)).toEqual([]);
    await crashed.transact((tx) => tx.put('accounts', account('next')));
    expect(await journalSeqs(dir)).toEqual([16]);
  });

  test('snapshots racing with writes lose nothing', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    const writes = Promise.all(ids(300, 'r').map((id) => s.transact((tx) => tx.put('accounts', account(id)))));
    const snaps = Promise.all([s.snapshot(), new Promise((r) => setTimeout(r, 5)).then(() => s.snapshot()), s.snapshot()]);
    await Promise.all([writes, snaps]);
    const crashed = await openStore(dir);
    expect(await crashed.count('accounts')).toBe(300);
    await s.close();
    const reopened = await openStore(dir);
    expect(await reopened.count('accounts')).toBe(300);
  });
});
