// `gpufleet store check|repair` (issue 8, item 6), run as the operator runs them: the real CLI in a
// child process against a data directory. check reads only; repair keeps the records before the
// first damage, sets the rest aside as .corrupt files byte for byte, and says so.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { formatRecord } from '../../store/embedded/journal-format.ts';
import { LowdbStore } from '../../store/embedded/lowdb-store.ts';
import { REPO_ROOT } from '../harness/control-plane.ts';
import { account, lines, segments, tree } from '../store/journal-helpers.ts';

const dirs: string[] = [];
const open: LowdbStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function openStore(dir: string): Promise<LowdbStore> {
  const s = await LowdbStore.open({ dir, snapshotIntervalMs: 3_600_000, onNotice: () => undefined });
  open.push(s);
  return s;
}

/** a data directory whose one journal segment holds ten acknowledged writes (the store never closed) */
async function crashedStore(): Promise<{ dir: string; seg: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-store-cli-'));
  dirs.push(dir);
  const s = await openStore(dir);
  for (let i = 1; i <= 10; i++) await s.transact((tx) => tx.put('accounts', account(`acct${i}`, i)));
  const [seg] = await segments(dir);
  return { dir, seg: seg! };
}

function gpufleet(...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], { cwd: REPO_ROOT }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

async function damageLine(seg: string, line: number): Promise<void> {
  const ls = await lines(seg);
  ls[line - 1] = ls[line - 1]!.replace(`"balance":${line}`, `"balance":${line + 100}`);
  await writeFile(seg, ls.join('\n') + '\n');
}

test('store check: exit 0 when clean, 2 for a torn last record, 1 for damage it names as file:line; it changes nothing', { timeout: 60_000 }, async () => {
  const { dir, seg } = await crashedStore();
  const clean = await gpufleet('store', 'check', '--data-dir', dir);
  expect(clean.code, clean.out).toBe(0);
  expect(clean.out).toMatch(/status\s+clean/);
  expect(clean.out).toContain('10 intact record(s) (seq 1–10)');

  const original = await readFile(seg);
  await writeFile(seg, Buffer.concat([original, Buffer.from('0badc0de {"seq":11,"op')]));
  const torn = await gpufleet('store', 'check', '--data-dir', dir);
  expect(torn.code, torn.out).toBe(2);
  expect(torn.out).toContain(`${seg}:11`);
  expect(torn.out).toContain('torn last record');

  await writeFile(seg, original);
  await damageLine(seg, 4);
  const before = await tree(dir);
  const damaged = await gpufleet('store', 'check', '--data-dir', dir);
  expect(damaged.code, damaged.out).toBe(1);
  expect(damaged.out).toContain(`${seg}:4: checksum mismatch`);
  expect(damaged.out).toContain('keeps every record through seq 3');
  expect(await tree(dir)).toEqual(before);

  const json = await gpufleet('store', 'check', '--data-dir', dir, '--json');
  expect(JSON.parse(json.out)).toMatchObject({ status: 'damaged', damage: { file: seg, line: 4, kind: 'checksum', tail: false } });
});

test('store repair keeps the records before the damage, sets the rest aside as .corrupt files, and the store opens', { timeout: 60_000 }, async () => {
  const { dir, seg } = await crashedStore();
  // a second segment after the damaged one: its records depend on the damaged one and go aside too
  const later = path.join(dir, 'journal', '000000000011.jsonl');
  await writeFile(later, [11, 12].map((seq) => formatRecord({ seq, ops: [{ c: 'accounts', id: `acct${seq}`, v: account(`acct${seq}`, seq) }] })).join(''));
  await damageLine(seg, 4);
  const damagedBytes = await readFile(seg);
  const laterBytes = await readFile(later);

  const r = await gpufleet('store', 'repair', '--data-dir', dir);
  expect(r.code, r.out).toBe(0);
  expect(r.out).toContain(`${seg}: lines 4–10 cut off (the whole file is first copied to ${seg}.corrupt)`);
  expect(r.out).toContain(`${later}: all 2 lines moved to ${later}.corrupt`);
  expect(r.out).toContain('now: clean');

  // nothing lost from disk: the damaged segment's bytes and the later segment are kept aside, whole
  expect(await readFile(`${seg}.corrupt`)).toEqual(damagedBytes);
  expect(await readFile(`${later}.corrupt`)).toEqual(laterBytes);
  expect(await segments(dir)).toEqual([seg]);
  expect(await lines(seg)).toHaveLength(3);

  expect((await gpufleet('store', 'check', '--data-dir', dir)).code).toBe(0);
  const again = await gpufleet('store', 'repair', '--data-dir', dir);
  expect(again.code).toBe(0);
  expect(again.out).toContain('nothing to repair');

  // the first store of this directory is still open (the "crashed" one): close it without letting it
  // snapshot its own memory over the repair
  open.length = 0;
  const s = await openStore(dir);
  expect((await s.list('accounts')).map((a) => a.id).sort()).toEqual(['acct1', 'acct2', 'acct3']);
});
