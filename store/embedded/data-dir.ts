// The data directory is private to the control plane's user: the folder and the journal folder 0700,
// the files in them 0600 (snapshot, journal segments, secret.key, …). New files are created with
// those modes; at start, files and folders left with looser modes (an older version, a restored
// backup, a copy made with another umask) are narrowed.
import { chmod, lstat, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Adapter } from 'lowdb';
import { GpufleetError } from '../../model/index.ts';
import { pausePoint } from '../base/pause-point.ts';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Narrows a file or folder `p` to its owner's bits when group or others have any; returns whether it changed. */
async function narrow(p: string): Promise<boolean> {
  const st = await lstat(p).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null; // gone since the folder was listed (a temp file renamed)
    throw e;
  });
  // a symbolic link is left alone: its target may be anything, anywhere
  if (!st || (!st.isFile() && !st.isDirectory())) return false;
  if ((st.mode & 0o077) === 0) return false;
  try {
    // owner bits only: our own files are 0600 and the folders 0700 already; an operator's file
    // keeps what its owner may do with it
    await chmod(p, st.mode & 0o700);
  } catch (e) {
    throw new GpufleetError('INTERNAL', `${p} is readable by other users and its mode cannot be changed; refusing to start`, { cause: e });
  }
  return true;
}

/**
 * Creates `dataDir` and `journalDir` (0700) and narrows the modes of both folders and of every file
 * and folder directly in them (not deeper: the data directory is already closed to others). Returns
 * the paths whose modes were changed.
 */
export async function secureDataDir(dataDir: string, journalDir: string): Promise<string[]> {
  const changed: string[] = [];
  for (const dir of [dataDir, journalDir]) {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    if (await narrow(dir)) changed.push(dir);
    for (const name of await readdir(dir)) {
      const p = path.join(dir, name);
      if (await narrow(p)) changed.push(p);
    }
  }
  return changed;
}

/**
 * lowdb's adapter for the snapshot: JSON written to a temp file created 0600, flushed, then renamed
 * over the snapshot, so a crash leaves the old snapshot or the new one, never a mix, and the snapshot
 * is never readable by others, not even for a moment.
 */
export class SnapshotFile<T> implements Adapter<T> {
  private readonly tmp: string;

  constructor(
    private readonly file: string,
    private readonly fsync: boolean,
  ) {
    this.tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  }

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    return JSON.parse(text) as T;
  }

  async write(data: T): Promise<void> {
    const fh = await open(this.tmp, 'w', PRIVATE_FILE_MODE);
    try {
      // the mode given to open applies only when it creates the file; a temp file left by a crash keeps its own
      await fh.chmod(PRIVATE_FILE_MODE);
      // compact JSON: the snapshot is rewritten whole, and pretty-printing a large state doubles its cost
      await fh.writeFile(JSON.stringify(data));
      if (this.fsync) await fh.sync();
    } catch (e) {
      // a half-written temp file (a full disk) would hold on to the space the journal needs
      await fh.close().catch(() => undefined);
      await rm(this.tmp, { force: true }).catch(() => undefined);
      throw e;
    }
    await fh.close();
    await pausePoint('snapshot-temp-written');
    await rename(this.tmp, this.file);
  }
}
