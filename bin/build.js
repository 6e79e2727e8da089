#!/usr/bin/env node
// `npm run build` (and `npm ci`'s prepare): dist/ from tsconfig.build.json and dist/console (the web
// console, bin/build-console.js), then dist/build-info.json,
// dated when the build STARTED, so a source saved while tsc ran still counts as newer than the build
// (bin/dist-freshness.js). No stamp when tsc fails: bin/gpufleet.js then refuses dist/.
// `--out-dir <dir>` builds elsewhere (test/cli/dist-cli.test.ts, which must not race other builds of dist/).
import { spawnSync } from 'node:child_process';
import { realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { STAMP_NAME } from './dist-freshness.js';
import { buildConsole } from './build-console.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
const outDir = path.resolve(values['out-dir'] ?? path.join(root, 'dist'));
const started = new Date();
rmSync(outDir, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', outDir], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
// the web console's bundle, served at /console (docs/console.md)
await buildConsole(path.join(outDir, 'console'));
const stamp = path.join(outDir, STAMP_NAME);
// `dist` names where it was built: a package installed elsewhere (npm dates its files when it unpacks them) is not checked
writeFileSync(stamp, `${JSON.stringify({ startedAt: started.toISOString(), dist: realpathSync(outDir) })}\n`);
utimesSync(stamp, started, started);
