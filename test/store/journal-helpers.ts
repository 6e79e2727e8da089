// Helpers shared by the journal damage and `gpufleet store` tests: records, lines of a segment, and
// the bytes of a whole data directory (to show that something changed nothing).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AccountRecord } from '../../model/records/account.ts';

export function account(id: string, balance = 0): AccountRecord {
  return { id, email: `${id}@test.local`, name: id, operator: false, balance, pubKey: '', createdAt: '2024-01-01T00:00:00.000Z' };
}

/** the journal segment files of a data directory, oldest first */
export async function segments(dir: string): Promise<string[]> {
  return (await readdir(path.join(dir, 'journal')))
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => path.join(dir, 'journal', f));
}

/** the lines of a file, without the empty string after its final newline */
export async function lines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').slice(0, -1);
}

/** every file under `dir` with its bytes (base64) */
export async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out[path.relative(dir, p)] = (await readFile(p)).toString('base64');
    }
  };
  await walk(dir);
  return out;
}
