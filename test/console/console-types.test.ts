// The console's sources (browser code: DOM types, Preact's JSX) are type-checked by their own
// tsconfig (console/tsconfig.json), which the root `tsc -p .` does not read; this runs it.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect, test } from 'vitest';
import { REPO_ROOT } from '../harness/control-plane.ts';

test('console/ type-checks under console/tsconfig.json (strict, DOM, Preact JSX)', async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const out = await new Promise<string>((resolve) =>
    execFile(process.execPath, [tsc, '--noEmit', '-p', path.join(REPO_ROOT, 'console')], { cwd: REPO_ROOT, timeout: 170_000 }, (err, stdout, stderr) => resolve(err ? `${stdout}${stderr}` || String(err) : '')),
  );
  expect(out).toBe('');
}, 180_000);
