// `gpufleet --version`: the version in the package's own package.json, found by walking up from this
// file, the same from the sources (cli/version.ts) as from the build (dist/cli/version.js) or an
// installed package.
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  for (let dir = new URL('..', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gpufleet' && pkg.version) return pkg.version;
    } catch {
      // no package.json here: look one folder up
    }
    if (new URL('..', dir).href === dir.href) return 'unknown';
  }
}
