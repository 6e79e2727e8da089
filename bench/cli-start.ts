// How long `gpufleet --help` takes, start to exit, as a ratio to the floor of any Node command
// measured in the same run: `node -e 0`. The two run in turn (A B A B …), so a machine that slows down
// during the run slows both; the medians are compared. Floor: ≤ 6× (issue 19). The same command run
// from the sources through tsx (GPUFLEET_DEV=1, what every command did before dist/) is printed beside.
// It builds the current sources into a package folder of its own (test/harness/built-package.ts: the
// sources beside dist/, so the bin's freshness check walks them as in a checkout).
//   npx tsx bench/cli-start.ts
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPackage } from '../test/harness/built-package.ts';
import { checkTarget } from './target.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = 15;
const WARMUP = 2;
const DEV_RUNS = 5;
const TARGET_RATIO = 6;

const { GPUFLEET_DEV: _dev, ...userEnv } = process.env;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** wall milliseconds of one run, start to exit; a run that fails stops the bench */
function wallMs(args: string[], env: NodeJS.ProcessEnv = userEnv): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: pkg.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr.toString()}`);
  return ms;
}

console.log('building the current sources (bin/build.js) …');
const pkg = await buildPackage();
const node: number[] = [];
const cli: number[] = [];
let dev: number[];
try {
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const a = wallMs(['-e', '0']);
    const b = wallMs([pkg.bin, '--help']);
    if (i < WARMUP) continue;
    node.push(a);
    cli.push(b);
  }
  dev = Array.from({ length: DEV_RUNS }, () => wallMs([path.join(ROOT, 'bin/gpufleet.js'), '--help'], { ...userEnv, GPUFLEET_DEV: '1' }));
} finally {
  await pkg.remove();
}

const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
console.log(`node -e 0                          ${fmt(node)}  [${RUNS} runs, alternating]`);
console.log(`gpufleet --help (dist/)            ${fmt(cli)}`);
console.log(`gpufleet --help (GPUFLEET_DEV=1)   ${fmt(dev)}  [${DEV_RUNS} runs; tsx compiles the sources, for comparison]`);
checkTarget({ name: 'gpufleet --help wall time / node -e 0', value: median(cli) / median(node), op: '<=', floor: TARGET_RATIO, unit: '×' });
