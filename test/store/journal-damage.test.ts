// Issue 8, item 6: journal damage never drops acknowledged writes silently. Every record carries a
// checksum; start cuts only a torn last record (what a crash mid-append leaves) and refuses, naming
// the file and line and changing nothing, on damage anywhere else.
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { LowdbStore } from '../../store/embedded/lowdb-store.ts';
import { isGpufleetError, type GpufleetError } from '../../model/base/errors.ts';
import { account, lines, segments, tree } from './journal-helpers.ts';

const dirs: string[] = [];
const open: LowdbStore[] = [];

afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-damage-'));
  dirs.push(d);
  return d;
}

async function openStore(dir: string, onNotice?: (m: string) => void): Promise<LowdbStore> {
  // no timed snapshot: the writes stay in the journal, as after a crash
  const s = await LowdbStore.open({ dir, snapshotIntervalMs: 3_600_000, onNotice: onNotice ?? (() => undefined) });
  open.push(s);
  return s;
}

/** ten acknowledged writes, left in one journal segment by a store that never closes (a crash) */
async function tenAcknowledgedWrites(dir: string): Promise<string> {
  const s = await openStore(dir);
  for (let i = 1; i <= 10; i++) await s.transact((tx) => tx.put('accounts', account(`acct${i}`, i)));
  const segs = await segments(dir);
  expect(segs).toHaveLength(1);
  return segs[0]!;
}

async function refusal(dir: string): Promise<GpufleetError> {
  const e: unknown = await LowdbStore.open({ dir, onNotice: () => undefined }).then(
    (s) => {
      open.push(s);
      throw new Error('the store opened');
    },
    (err: unknown) => err,
  );
  if (!isGpufleetError(e)) throw e;
  return e;
}

describe('damage before the last record: start refuses and changes nothing', () => {
  test('a record altered mid-journal, still valid JSON, is caught by its checksum: start names file:line', async () => {
    const dir = await tempDir();
    const seg = await tenAcknowledgedWrites(dir);
    const ls = await lines(seg);
    // line 3 (acct3, balance 3): the balance flipped to 7, the JSON still parses
    expect(ls[2]).toContain('"balance":3');
    ls[2] = ls[2]!.replace('"balance":3', '"balance":7');
    await writeFile(seg, ls.join('\n') + '\n');
    const before = await tree(dir);

    const e = await refusal(dir);
    expect(e.fields).toMatchObject({ file: seg, line: 3, kind: 'checksum' });
    expect(e.message).toContain(`${seg}:3`);
    expect(await tree(dir)).toEqual(before); // nothing truncated, nothing deleted
  });

  test('a line cut short mid-journal refuses start instead of dropping the acknowledged writes after it', async () => {
    const dir = await tempDir();
    const seg = await tenAcknowledgedWrites(dir);
    const ls = await lines(seg);
    ls[2] = ls[2]!.slice(0, 40); // the old replay stopped here, truncated, and lost writes 3 to 10
    await writeFile(seg, ls.join('\n') + '\n');
    const before = await tree(dir);

    const e = await refusal(dir);
    expect(e.fields).toMatchObject({ file: seg, line: 3 });
    expect(e.message).toContain(`${seg}:3`);
    expect(await tree(dir)).toEqual(before);
  });

  test('a record missing from the middle of the journal refuses start (sequence gap)', async () => {
    const dir = await tempDir();
    const seg = await tenAcknowledgedWrites(dir);
    const ls = await lines(seg);
    ls.splice(3, 1); // seq 4 gone: every line still passes its checksum
    await writeFile(seg, ls.join('\n') + '\n');

    const e = await refusal(dir);
    expect(e.fields).toMatchObject({ file: seg, line: 4, kind: 'sequence' });
  });

  test('a lost snapshot is not replaced by the journal after it: start refuses', async () => {
    const dir = await tempDir();
    const s = await openStore(dir);
    for (let i = 1; i <= 5; i++) await s.transact((tx) => tx.put('accounts', account(`acct${i}`)));
    await s.snapshot();
    for (let i = 6; i <= 8; i++) await s.transact((tx) => tx.put('accounts', account(`acct${i}`)));
    await rm(path.join(dir, 'gpufleet.json'));

    const e = await refusal(dir);
    expect(e.fields).toMatchObject({ kind: 'gap', line: 1 });
    expect(String(e.fields.file)).toMatch(/000000000006\.jsonl$/);
  });
});

describe('a torn last record: cut, and start keeps every earlier acknowledged write', () => {
  const tails: [string, (seg: string) => Promise<void>][] = [
    [
      'an incomplete final line',
      (seg) => readFile(seg, 'utf8').then((t) => writeFile(seg, `${t}0badc0de {"seq":11,"ops":[{"c":"accounts","id":"torn","v":{"id":"to`)),
    ],
    [
      'a final line that fails its checksum',
      async (seg) => {
        const ls = await lines(seg);
        ls[9] = ls[9]!.replace('"balance":10', '"balance":99');
        await writeFile(seg, ls.join('\n') + '\n');
      },
    ],
    ['a zero-filled tail', (seg) => readFile(seg).then((b) => writeFile(seg, Buffer.concat([b, Buffer.alloc(300)])))],
  ];

  test.each(tails)('%s', async (what, tear) => {
    const dir = await tempDir();
    const seg = await tenAcknowledgedWrites(dir);
    await tear(seg);
    const notices: string[] = [];
    const s = await openStore(dir, (m) => notices.push(m));
    const kept = what === 'a final line that fails its checksum' ? 9 : 10;
    expect(await s.count('accounts')).toBe(kept);
    for (let i = 1; i <= kept; i++) expect((await s.get('accounts', `acct${i}`))?.balance).toBe(i);
    expect(await s.get('accounts', 'torn')).toBeUndefined();
    // never silent: the cut is reported with its place
    const lineNo = kept + 1;
    expect(notices.some((n) => n.includes(`${seg}:${lineNo}`) && n.includes('torn'))).toBe(true);
    // the store goes on: numbered from the last good record, and it reopens cleanly
    await s.transact((tx) => tx.put('accounts', account('after')));
    await s.close();
    const again = await openStore(dir);
    expect(await again.count('accounts')).toBe(kept + 1);
  });
});

test('a journal written before checksums (plain JSON lines) still replays', async () => {
  const dir = await tempDir();
  await mkdir(path.join(dir, 'journal'), { recursive: true });
  const legacy = [1, 2, 3].map((seq) => JSON.stringify({ seq, ops: [{ c: 'accounts', id: `old${seq}`, v: account(`old${seq}`, seq) }] }) + '\n');
  await writeFile(path.join(dir, 'journal', '000000000001.jsonl'), legacy.join(''));
  const s = await openStore(dir);
  expect(await s.count('accounts')).toBe(3);
  expect((await s.get('accounts', 'old3'))?.balance).toBe(3);
  // replayed into the snapshot; the old segment is gone, later lines are checksummed
  expect((await readdir(path.join(dir, 'journal'))).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
  await s.transact((tx) => tx.put('accounts', account('new')));
  const [seg] = (await readdir(path.join(dir, 'journal'))).filter((f) => f.endsWith('.jsonl'));
  expect(await readFile(path.join(dir, 'journal', seg!), 'utf8')).toMatch(/^[0-9a-f]{8} \{"seq":4,/);
  expect((await stat(path.join(dir, 'journal', seg!))).mode & 0o777).toBe(0o600);
});
