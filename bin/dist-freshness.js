// Is dist/ there, and built after the last change to the sources it was built from? `bin/gpufleet.js`
// asks before running the built CLI, so a checkout that changed since `npm run build` says so in one
// line instead of running old code (docs/cli.md, "Built or from the sources"). Plain JavaScript: it
// runs before anything is compiled.
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/** the layers dist/ is built from (tsconfig.build.json); a folder that is not there (a package without its sources) is skipped */
export const SOURCE_DIRS = ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'provider', 'worker', 'cli', 'testing'];

/**
 * dist/'s stamp, written by bin/build.js when tsc succeeded: its mtime is the moment the build started,
 * its `dist` the folder it was built in
 */
export const STAMP_NAME = 'build-info.json';

const HINT = 'run `npm run build`, or set GPUFLEET_DEV=1 to run the sources through tsx';

function mtimeMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** the first source file changed after `since`, or null */
function newerSource(root, since) {
  for (const dir of SOURCE_DIRS) {
    let names;
    try {
      names = readdirSync(path.join(root, dir), { recursive: true });
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.endsWith('.ts') || name.endsWith('.test.ts') || name.endsWith('.d.ts')) continue;
      const file = path.join(dir, name);
      if ((mtimeMs(path.join(root, file)) ?? 0) > since) return file;
    }
  }
  return null;
}

/** the stamp's date and the folder it says dist/ was built in; null when missing or unreadable */
function readStamp(file) {
  try {
    const { dist } = JSON.parse(readFileSync(file, 'utf8'));
    return typeof dist === 'string' ? { builtAt: statSync(file).mtimeMs, dist } : null;
  } catch {
    return null;
  }
}

/** null when dist/ can run; otherwise the one line that says why not and what to do */
export function distProblem(root) {
  if (mtimeMs(path.join(root, 'dist/cli/main.js')) === null) return `gpufleet: dist/ is not built: ${HINT}`;
  const stamp = readStamp(path.join(root, 'dist', STAMP_NAME));
  if (!stamp) return `gpufleet: dist/ has no ${STAMP_NAME} (its build failed, or was not \`npm run build\`): ${HINT}`;
  // built elsewhere, then packed and installed here: npm dates the files as it unpacks them, so their
  // dates say nothing about which is newer (and an installed package's sources are not edited)
  if (stamp.dist !== realpathSync(path.join(root, 'dist'))) return null;
  const changed = newerSource(root, stamp.builtAt);
  return changed ? `gpufleet: dist/ is older than the sources (${changed} changed after the build): ${HINT}` : null;
}
