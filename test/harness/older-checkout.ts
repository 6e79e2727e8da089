// An older version of gpufleet, checked out beside this one (upgrade tests start it against a database
// the new version migrated): `git archive <commit>` of this repository unpacked in a temp directory,
// with this checkout's node_modules linked in (the dependencies of the versions the tests name are the
// same). Answers null when the repository lacks the commit (a shallow clone): the caller skips, saying so.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './control-plane.ts';

const run = promisify(execFile);

export async function hasCommit(commit: string): Promise<boolean> {
  return run('git', ['-C', REPO_ROOT, 'cat-file', '-e', `${commit}^{commit}`]).then(
    () => true,
    () => false,
  );
}

/**
 * the checkout's directory (made once per machine and checkout, kept for the next run), or null without the
 * commit; the name holds this checkout's path, so a directory another checkout made (its node_modules link
 * dangling once that checkout is gone) is never taken
 */
export async function olderCheckout(commit: string): Promise<string | null> {
  if (!/^[0-9a-f]{7,40}$/.test(commit)) throw new Error(`not a commit: ${commit}`);
  if (!(await hasCommit(commit))) return null;
  const owner = createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12);
  const dir = path.join(tmpdir(), `gpufleet-older-${commit}-${owner}`);
  if (existsSync(path.join(dir, '.unpacked'))) return dir;
  const part = `${dir}.${process.pid}`;
  await rm(part, { recursive: true, force: true });
  await mkdir(part, { recursive: true });
  await run('bash', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'archive', REPO_ROOT, commit, part], { maxBuffer: 1 << 20 });
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(part, 'node_modules'));
  await writeFile(path.join(part, '.unpacked'), `${commit}\n`);
  // another run unpacking at the same moment: whichever renames first wins, the other's copy goes
  await rename(part, dir).catch(() => rm(part, { recursive: true, force: true }));
  return dir;
}
