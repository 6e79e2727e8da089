// File operations every log in store/ shares: modes, complete writes, flushing a folder's entries,
// cutting files back to their durable size, and writing a whole file of records atomically.
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { encodeLine } from './line-format.ts';

/** logs are private to the control plane's user */
export const LOG_DIR_MODE = 0o700;
export const LOG_FILE_MODE = 0o600;

/** Writes all of `buf`: a short write (a disk filling up) is continued, and fails at the next call. */
export async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    if (bytesWritten <= 0) throw new Error('write made no progress');
    off += bytesWritten;
  }
}

/**
 * flushes a folder's entries (a created, renamed or deleted name survives a power loss), or a file's
 * bytes and size (a file cut back by `truncate`)
 */
export async function fsyncPath(p: string): Promise<void> {
  const fh = await open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** records are written in pieces of about this size, so the event loop keeps turning */
const CHUNK = 1 << 20;

/**
 * Writes `values` as checksummed lines to `file` atomically: a temp file beside it, flushed, then
 * renamed once `ready` resolves (and the folder flushed). On failure the temp file is removed and
 * `file` is as it was. Resolves with the bytes written.
 */
export async function writeLinesAtomically(file: string, values: Iterable<unknown>, fsync: boolean, ready: Promise<void> = Promise.resolve()): Promise<number> {
  ready.catch(() => undefined); // awaited below; a failure meanwhile must not go unhandled
  const tmp = `${file}.tmp`;
  let size = 0;
  try {
    const fh = await open(tmp, 'w', LOG_FILE_MODE);
    try {
      let parts: Buffer[] = [];
      let partBytes = 0;
      for (const v of values) {
        const buf = encodeLine(v);
        parts.push(buf);
        partBytes += buf.length;
        if (partBytes >= CHUNK) {
          await writeAll(fh, Buffer.concat(parts));
          size += partBytes;
          parts = [];
          partBytes = 0;
        }
      }
      await writeAll(fh, Buffer.concat(parts));
      size += partBytes;
      if (fsync) await fh.datasync();
    } finally {
      await fh.close();
    }
    await ready;
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await rename(tmp, file);
  if (fsync) await fsyncPath(path.dirname(file));
  return size;
}
