// The layers, lowest first: model → store → fleet → core → api | provisioner | gateway, and
// model → client → provider; cli on top. This test reads every source file's imports (`import type`
// and re-exports included) and fails on an import that runs against that order, on an import of
// another layer's internals (other layers go through its index.ts), and on any cycle.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BELOW: Record<string, string[]> = {
  model: [],
  store: ['model'],
  fleet: ['model', 'store'],
  core: ['model', 'store', 'fleet'],
  api: ['model', 'store', 'fleet', 'core'],
  provisioner: ['model', 'store', 'fleet', 'core'],
  gateway: ['model', 'store', 'fleet', 'core'],
  client: ['model'],
  provider: ['model', 'client'],
  worker: [],
  cli: ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'provider', 'worker'],
};
const LAYERS = Object.keys(BELOW);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'fixtures' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)]
    .map((m) => m[1] ?? m[2]!)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec));
}

const layerOf = (file: string): string => relative(ROOT, file).split('/')[0]!;
const files = LAYERS.flatMap((layer) => {
  try {
    return sourceFiles(join(ROOT, layer));
  } catch {
    return [];
  }
});
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe('layers', () => {
  it('no import runs against the layer order', () => {
    const wrong = [...graph].flatMap(([file, deps]) =>
      deps
        .filter((dep) => layerOf(dep) !== layerOf(file) && !BELOW[layerOf(file)]!.includes(layerOf(dep)))
        .map((dep) => `${relative(ROOT, file)} imports ${relative(ROOT, dep)}`),
    );
    expect(wrong).toEqual([]);
  });

  it("other layers are reached through their index.ts only", () => {
    const wrong = [...graph].flatMap(([file, deps]) =>
      deps
        .filter((dep) => layerOf(dep) !== layerOf(file) && relative(ROOT, dep) !== `${layerOf(dep)}/index.ts`)
        .map((dep) => `${relative(ROOT, file)} imports ${relative(ROOT, dep)}`),
    );
    expect(wrong).toEqual([]);
  });

  it('there is no import cycle, import type included', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string): void => {
      state.set(file, 'open');
      stack.push(file);
      for (const dep of graph.get(file) ?? []) {
        if (!graph.has(dep)) continue;
        if (state.get(dep) === 'open') cycles.push(stack.slice(stack.indexOf(dep)).concat(dep).map((f) => relative(ROOT, f)).join(' → '));
        else if (!state.has(dep)) visit(dep);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });

  it('reads the layers it is meant to check', () => {
    // a walker that finds nothing would pass everything above
    for (const layer of ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'provider', 'cli'])
      expect(files.some((f) => layerOf(f) === layer), layer).toBe(true);
  });
});
