// A small filesystem that a test can fill up and free again: a tmpfs of a few MiB mounted on a
// fresh folder (root only). `fill` writes a file until the kernel answers ENOSPC, so the next write
// anyone makes there fails exactly as on a full disk; `free` deletes it.
import { execFile } from 'node:child_process';
import { mkdtemp, open, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export const canMount = process.getuid?.() === 0;

export interface SmallFs {
  dir: string;
  /** writes a filler file until the filesystem is full (ENOSPC) */
  fill(): Promise<void>;
  /** deletes the filler */
  free(): Promise<void>;
  unmount(): Promise<void>;
}

export async function mountSmallFs(sizeMiB: number): Promise<SmallFs> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-smallfs-'));
  await exec('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir]);
  const filler = path.join(dir, 'filler');
  return {
    dir,
    async fill() {
      const fh = await open(filler, 'a');
      try {
        // big chunks first, then smaller ones, down to a byte: nothing is left over
        for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
          const buf = Buffer.alloc(size, 0x78);
          for (;;) {
            try {
              const { bytesWritten } = await fh.write(buf);
              if (bytesWritten < size) break;
            } catch (e) {
              if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw e;
            }
          }
        }
      } finally {
        await fh.close();
      }
    },
    async free() {
      await rm(filler, { force: true });
    },
    async unmount() {
      await exec('umount', ['-l', dir]).catch(() => undefined);
      await rmdir(dir).catch(() => undefined);
    },
  };
}
