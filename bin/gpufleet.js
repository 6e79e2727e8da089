#!/usr/bin/env node
// The `gpufleet` command (and `npm start`). It runs the built CLI in dist/, which starts in a fraction
// of the time tsx needs to compile the sources; GPUFLEET_DEV=1 runs the TypeScript sources through
// tsx instead (tests do: they change sources between builds). A dist/ that is missing or older than
// the sources is refused with a one-line hint rather than run as it is (docs/cli.md).
if (process.env.GPUFLEET_DEV === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
} else {
  const [{ distProblem }, { fileURLToPath }] = await Promise.all([import('./dist-freshness.js'), import('node:url')]);
  const problem = distProblem(fileURLToPath(new URL('..', import.meta.url)));
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exitCode = 1;
  } else await import('../dist/cli/main.js');
}
