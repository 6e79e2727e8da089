// What every `gpufleet` command loads before it runs: the static imports reachable from cli/main.ts
// (`import type` is erased, and `import()` runs only in the command that needs it). They must stay in
// cli/ and client/, with commander the only package: core/, store/, api/, provider/ (cdktf), the S3
// SDK, ora and cli-table3 are loaded by the commands that use them (docs/cli.md, "Start-up time";
// bench/cli-start.ts measures it).
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
/** `import … from '…'`, `import '…'` and `export … from '…'`, but not `import type` / `export type` */
const STATIC_VALUE_IMPORT = /(?:^|\n)\s*(?:import(?!\s+type\s)(?:\s[^;]*?from)?|export(?!\s+type\s)\s[^;]*?from)\s*'([^']+)'/g;
const ALLOWED_PACKAGES = new Set(['commander']);

function staticClosure(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_VALUE_IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:') && !builtinModules.includes(spec)) packages.add(spec);
    }
  };
  visit(resolve(ROOT, 'cli/main.ts'));
  return { files: [...files].map((f) => relative(ROOT, f)).sort(), packages: [...packages].sort() };
}

describe('what `gpufleet` loads before any command runs', () => {
  const { files, packages } = staticClosure(resolve(ROOT, 'cli/main.ts'));

  it('only cli/ and client/ files', () => {
    expect(files.filter((f) => !/^(cli|client)\//.test(f))).toEqual([]);
  });

  it('no package but commander', () => {
    expect(packages.filter((p) => !ALLOWED_PACKAGES.has(p))).toEqual([]);
  });

  it('reads the graph it is meant to check', () => {
    // a reader that found nothing would pass the two above
    expect(files).toEqual(expect.arrayContaining(['cli/main.ts', 'cli/pods.ts', 'cli/serve.ts', 'cli/stack-commands.ts', 'client/index.ts', 'client/api-client.ts']));
    expect(packages).toContain('commander');
  });
});
