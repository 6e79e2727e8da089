// The media store on local disk: `<dataDir>/media/<key>` (directory 0700, files 0600). A put writes
// a temporary file and renames it, so a reader sees the whole object or none.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { assertMediaKey, MEDIA_KEY_PATTERN, type ByteRange, type MediaObject, type MediaStore } from './media-store.ts';

const STALE_TMP_MS = 3_600_000;

export class LocalMediaStore implements MediaStore {
  readonly backend = 'local';

  constructor(private readonly dir: string) {}

  async put(key: string, bytes: Buffer, _contentType: string): Promise<void> {
    assertMediaKey(key);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = path.join(this.dir, `.tmp-${randomBytes(8).toString('hex')}`);
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(bytes);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    try {
      await rename(tmp, path.join(this.dir, key));
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async size(key: string): Promise<number | undefined> {
    assertMediaKey(key);
    try {
      return (await stat(path.join(this.dir, key))).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async get(key: string, range?: ByteRange): Promise<MediaObject | undefined> {
    assertMediaKey(key);
    const file = path.join(this.dir, key);
    // opened before it is answered: a sweep deleting the file afterwards does not cut the read short
    let fh;
    try {
      fh = await open(file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    let size: number;
    try {
      size = (await fh.stat()).size;
    } catch (e) {
      await fh.close();
      throw e;
    }
    // the stream closes the handle when it ends or is destroyed
    const body = fh.createReadStream(range ? { start: range.start, end: range.end } : {});
    return { body, size: range ? range.end - range.start + 1 : size };
  }

  async delete(key: string): Promise<void> {
    assertMediaKey(key);
    await rm(path.join(this.dir, key), { force: true });
  }

  async *list(): AsyncIterable<string> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    for (const n of names) {
      if (MEDIA_KEY_PATTERN.test(n)) yield n;
      // a write cut short by a crash left its temporary file: gone an hour later, at a sweep
      else if (n.startsWith('.tmp-')) await this.dropStale(path.join(this.dir, n));
    }
  }

  private async dropStale(file: string): Promise<void> {
    try {
      if (Date.now() - (await stat(file)).mtimeMs > STALE_TMP_MS) await rm(file, { force: true });
    } catch {
      /* gone already */
    }
  }

  async close(): Promise<void> {}
}
