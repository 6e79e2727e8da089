// `gpufleet store check` and `gpufleet store repair`: what is wrong with a data directory, and the one
// repair an operator may choose. Start never repairs more than a torn last journal record by itself;
// anything else is reported here and repaired only when an operator runs `repair`, which keeps the
// longest undamaged prefix of the history and moves everything from the first damaged record on
// aside into `*.corrupt` files (nothing is deleted). Run both only while the control plane is stopped.
import { constants, existsSync } from 'node:fs';
import { copyFile, lstat, open, readdir, readFile, rename, truncate } from 'node:fs/promises';
import path from 'node:path';
import { GpufleetError } from '../../model/index.ts';
import { PRIVATE_FILE_MODE } from './data-dir.ts';
import { scanJournal, type JournalDamage } from './journal-scan.ts';
import { JOURNAL_DIR, SNAPSHOT_FILE, type SnapshotData } from './lowdb-store.ts';
import { RecordCodec, type StoredRecord } from '../base/record-codec.ts';
import { fsyncPath } from '../log/log-files.ts';
import { SECRET_KEY_FILE, SecretBox } from '../base/secret-box.ts';

/** clean: start opens it as it is; torn-tail: start cuts the last record itself; damaged: start refuses */
export type StoreStatus = 'clean' | 'torn-tail' | 'damaged';

export interface SetAside {
  /** the segment */
  file: string;
  /** where its original bytes go */
  aside: string;
  /** lines set aside (from `fromLine` to the end of the file) */
  fromLine: number;
  lines: number;
  /** bytes kept in the segment (0: the whole segment moves) */
  keepBytes: number;
}

export interface StoreReport {
  dataDir: string;
  status: StoreStatus;
  snapshot: { file: string; seq: number; records: number } | { file: string; error: string };
  journal: { segments: number; records: number; firstSeq: number | null; lastSeq: number | null; legacyRecords: number };
  damage: JournalDamage | null;
  /** the records repair keeps: through this seq */
  keepsThroughSeq: number | null;
  /** what `repair` does (empty when there is nothing to repair) */
  repair: SetAside[];
  /** problems repair cannot fix (an unreadable snapshot, sealed values secret.key does not open) */
  problems: string[];
  /** paths readable by other users; start narrows them */
  looseModes: string[];
}

async function readSnapshot(file: string): Promise<SnapshotData | { error: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { seq: 0, collections: {} };
    return { error: (e as Error).message };
  }
  try {
    const data = JSON.parse(text) as SnapshotData;
    if (!Number.isSafeInteger(data.seq) || !data.collections || typeof data.collections !== 'object') return { error: 'not a snapshot (seq and collections expected)' };
    return data;
  } catch (e) {
    return { error: `not valid JSON: ${(e as Error).message}` };
  }
}

async function asideName(file: string): Promise<string> {
  let name = `${file}.corrupt`;
  for (let n = 1; existsSync(name); n++) name = `${file}.${n}.corrupt`;
  return name;
}

async function looseModes(dataDir: string, journalDir: string): Promise<string[]> {
  const loose: string[] = [];
  for (const dir of [dataDir, journalDir]) {
    const entries = await readdir(dir).catch(() => null);
    if (!entries) continue;
    for (const p of [dir, ...entries.map((n) => path.join(dir, n))]) {
      const st = await lstat(p).catch(() => null);
      if (st && !st.isSymbolicLink() && (st.mode & 0o077) !== 0) loose.push(`${p} (${(st.mode & 0o777).toString(8)})`);
    }
  }
  return [...new Set(loose)];
}

/** Opens every sealed value with secret.key; returns what does not open. */
async function checkSealed(dataDir: string, records: { c: string; rec: StoredRecord; source: string }[]): Promise<string[]> {
  const sealed = records.filter((r) => r.rec.$sealed !== undefined);
  if (sealed.length === 0) return [];
  if (!existsSync(path.join(dataDir, SECRET_KEY_FILE))) return [`${sealed.length} records hold sealed values but ${SECRET_KEY_FILE} is missing`];
  let codec: RecordCodec;
  try {
    codec = new RecordCodec(await SecretBox.load(dataDir));
  } catch (e) {
    return [(e as Error).message];
  }
  const failed: string[] = [];
  for (const { c, rec, source } of sealed) {
    try {
      codec.decode(c, rec, source);
    } catch (e) {
      failed.push((e as Error).message);
    }
  }
  return failed.length > 3 ? [...failed.slice(0, 3), `… and ${failed.length - 3} more records whose sealed values do not open`] : failed;
}

export async function checkStore(dataDir: string): Promise<StoreReport> {
  if (!existsSync(dataDir)) throw new GpufleetError('NOT_FOUND', `There is no data directory at ${dataDir}.`);
  const journalDir = path.join(dataDir, JOURNAL_DIR);
  const snapshotFile = path.join(dataDir, SNAPSHOT_FILE);
  const snap = await readSnapshot(snapshotFile);
  const problems: string[] = [];
  const records: { c: string; rec: StoredRecord; source: string }[] = [];
  let snapshot: StoreReport['snapshot'];
  if ('error' in snap) {
    snapshot = { file: snapshotFile, error: snap.error };
    problems.push(`${snapshotFile} cannot be read (${snap.error}); restore it from a backup`);
  } else {
    let n = 0;
    for (const [c, rows] of Object.entries(snap.collections))
      for (const rec of Object.values(rows)) {
        n++;
        records.push({ c, rec: rec as StoredRecord, source: snapshotFile });
      }
    snapshot = { file: snapshotFile, seq: snap.seq, records: n };
  }
  // without a snapshot seq there is nothing to compare the journal's beginning with
  const afterSeq = 'error' in snap ? Number.POSITIVE_INFINITY : snap.seq;
  const scan = await scanJournal(journalDir, afterSeq);
  const all = scan.segments.flatMap((s) => s.entries);
  for (const s of scan.segments)
    for (const e of s.entries) for (const op of e.ops) if (op.v !== null) records.push({ c: op.c, rec: op.v as StoredRecord, source: s.file });
  problems.push(...(await checkSealed(dataDir, records)));

  const repair: SetAside[] = [];
  const { damage } = scan;
  let keepsThroughSeq: number | null = null;
  if (damage) {
    const k = scan.segments.findIndex((s) => s.damage === damage);
    const seg = scan.segments[k]!;
    repair.push({ file: seg.file, aside: await asideName(seg.file), fromLine: damage.line, lines: seg.linesFromDamage, keepBytes: damage.offset });
    for (const later of scan.segments.slice(k + 1))
      if (later.size > 0) repair.push({ file: later.file, aside: await asideName(later.file), fromLine: 1, lines: later.lines, keepBytes: 0 });
    keepsThroughSeq = 'error' in snap ? null : scan.lastSeq;
  }
  const status: StoreStatus = problems.length > 0 || (damage && !damage.tail) ? 'damaged' : damage ? 'torn-tail' : 'clean';
  return {
    dataDir,
    status,
    snapshot,
    journal: {
      segments: scan.segments.length,
      records: all.length,
      firstSeq: all[0]?.seq ?? null,
      lastSeq: all.at(-1)?.seq ?? null,
      legacyRecords: scan.segments.reduce((n, s) => n + s.legacy, 0),
    },
    damage,
    keepsThroughSeq,
    repair,
    problems,
    looseModes: await looseModes(dataDir, journalDir),
  };
}

/**
 * Carries out the report's repair: for the damaged segment, its original bytes are copied to its
 * `.corrupt` file and the segment is cut where the damage begins; each later segment is renamed to
 * its `.corrupt` file whole. Returns what was done and the state afterwards.
 */
export async function repairStore(dataDir: string): Promise<{ before: StoreReport; done: SetAside[]; after: StoreReport }> {
  const before = await checkStore(dataDir);
  if ('error' in before.snapshot)
    throw new GpufleetError('INTERNAL', `${before.snapshot.file} cannot be read (${before.snapshot.error}); repair only mends the journal: restore the snapshot from a backup`);
  const done: SetAside[] = [];
  for (const step of before.repair) {
    if (step.keepBytes > 0) {
      await copyFile(step.file, step.aside, constants.COPYFILE_EXCL);
      const fh = await open(step.aside, 'r+');
      try {
        await fh.chmod(PRIVATE_FILE_MODE);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await truncate(step.file, step.keepBytes);
      await fsyncPath(step.file);
    } else {
      await rename(step.file, step.aside);
    }
    done.push(step);
  }
  if (done.length > 0) await fsyncPath(path.join(dataDir, JOURNAL_DIR));
  return { before, done, after: await checkStore(dataDir) };
}
