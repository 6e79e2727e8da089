// The layers, lowest first: model → store → fleet → core → api | provisioner | gateway, and
// model → client → provider | console (the web console, browser code); cli on top; testing/
// (gpufleet/testing) over the server's layers;
// bench/ and test/harness/ (which drive the product from outside, test/harness/ on testing/) and models/ (the public model images, on worker/) beside it. This test reads every source
// file's imports (`import type` and re-exports included) and fails on an import that runs against that
// order, on an import of another layer's internals (other layers go through its index.ts), on any
// cycle, and on a knot between the folders of one layer: inside a layer the sub-folders (its loose root
// files count as one folder, ".") must stand in an order too, so if the wiring stays at a layer's
// root, no sub-folder imports from that root.
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
  // the web console (browser code, bundled by bin/build-console.js): the public API through client/ only
  console: ['model', 'client'],
  provider: ['model', 'client'],
  worker: [],
  cli: ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'provider', 'worker'],
  models: ['worker'],
  testing: ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'worker'],
  'test/harness': ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'provider', 'worker', 'cli', 'testing'],
  bench: ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'provider', 'worker', 'cli', 'testing', 'test/harness'],
};
const LAYERS = Object.keys(BELOW);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'fixtures' ? [] : sourceFiles(path);
    return (name.endsWith('.ts') || name.endsWith('.tsx')) && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
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

/** the layer a file belongs to: the longest layer folder it lies under ('test/harness' before 'test') */
const layerOf = (file: string): string => {
  const rel = relative(ROOT, file);
  return LAYERS.filter((l) => rel.startsWith(`${l}/`)).sort((a, b) => b.length - a.length)[0] ?? rel.split('/')[0]!;
};
/** helpers that bench/ may use as they are: the harness, and the test fixtures it starts workers with */
const TEST_HELPERS = ['test/harness/', 'test/api/jobs/'];
const helper = (file: string, dep: string): boolean => layerOf(file) === 'bench' && TEST_HELPERS.some((h) => relative(ROOT, dep).startsWith(h));
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
        .filter((dep) => layerOf(dep) !== layerOf(file) && !BELOW[layerOf(file)]!.includes(layerOf(dep)) && !helper(file, dep))
        .map((dep) => `${relative(ROOT, file)} imports ${relative(ROOT, dep)}`),
    );
    expect(wrong).toEqual([]);
  });

  it("other layers are reached through their index.ts only", () => {
    const wrong = [...graph].flatMap(([file, deps]) =>
      deps
        .filter((dep) => layerOf(dep) !== layerOf(file) && relative(ROOT, dep) !== `${layerOf(dep)}/index.ts` && !helper(file, dep))
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

  it('no knot between the folders of a layer', () => {
    expect(folderKnots(graph)).toEqual([]);
  });

  it('finds a knot between folders when there is one', () => {
    // the check above must be able to fail: one import from a sub-folder back to the wiring at core's
    // root (core/index.ts imports every domain) closes a loop
    const jobsFile = files.find((f) => relative(ROOT, f).startsWith('core/jobs/'))!;
    const knotted = new Map(graph);
    knotted.set(jobsFile, [...graph.get(jobsFile)!, join(ROOT, 'core/services.ts')]);
    const knots = folderKnots(knotted).filter((k) => k.startsWith('core:'));
    expect(knots).toHaveLength(1);
    expect(knots[0]).toMatch(/^core: .*jobs.*core\/jobs\/.* → core\/services\.ts/);
  });

  it('reads the layers it is meant to check', () => {
    // a walker that finds nothing would pass everything above
    for (const layer of ['model', 'store', 'fleet', 'core', 'api', 'provisioner', 'gateway', 'client', 'console', 'provider', 'cli', 'testing', 'bench', 'models', 'test/harness'])
      expect(files.some((f) => layerOf(f) === layer), layer).toBe(true);
  });
});

/**
 * Per layer, the sets of its folders (first level under the layer; loose root files are ".") that
 * import each other in a loop (Tarjan's strongly connected components), each as
 * `layer: a ⇄ b ⇄ …` followed by the file imports behind the loop's edges.
 */
function folderKnots(g: Map<string, string[]>): string[] {
  const knots: string[] = [];
  for (const layer of LAYERS) {
    const top = join(ROOT, layer);
    const folderOf = (f: string): string => {
      const parts = relative(top, f).split('/');
      return parts.length > 1 ? parts[0]! : '.';
    };
    const edges = new Map<string, Map<string, string>>();
    for (const [file, deps] of g) {
      if (layerOf(file) !== layer) continue;
      for (const dep of deps) {
        if (layerOf(dep) !== layer || !g.has(dep)) continue;
        const [a, b] = [folderOf(file), folderOf(dep)];
        if (a === b) continue;
        if (!edges.has(a)) edges.set(a, new Map());
        if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, `${relative(ROOT, file)} → ${relative(ROOT, dep)}`);
      }
    }
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const visit = (v: string): void => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      for (const w of edges.get(v)?.keys() ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) !== index.get(v)) return;
      const set = stack.splice(stack.indexOf(v));
      if (set.length < 2) return;
      const why = set.flatMap((a) => set.flatMap((b) => (edges.get(a)?.has(b) ? [edges.get(a)!.get(b)!] : [])));
      knots.push(`${layer}: ${set.sort().join(' ⇄ ')} (${why.join('; ')})`);
    };
    for (const v of edges.keys()) if (!index.has(v)) visit(v);
  }
  return knots;
}
