// test/ mirrors the source folders (test/README.md): a test of what lives in core/jobs/ is under
// test/core/jobs/, of cli/ under test/cli/. Every file under test/ lies in a folder that is a source
// folder path (test/<source folder>[/<sub-folder>…], the folder existing at the repository root), or
// under one of the cross-cutting folders, or in a fixtures/ or __snapshots__/ folder below either.
// No test file lies outside test/ (no colocated *.test.ts in the source folders), and every test file
// a file of the repository names by its path (docs, comments, .ci/postgres-slice.txt, vitest.config.ts)
// is there: a test moved is not left named at its old place.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TEST = join(ROOT, 'test');
/** the top-level source folders test/ mirrors */
export const SOURCE_FOLDERS = ['api', 'cli', 'client', 'console', 'core', 'fleet', 'gateway', 'model', 'models', 'provider', 'provisioner', 'store', 'testing', 'worker'];
/** folders about the whole product, not one source folder: anything may lie below them */
export const CROSS_CUTTING = ['architecture', 'docs', 'package', 'harness', 'fixtures'];
/** a folder of data or child programs a test uses, below a mirrored folder */
const FIXTURE_FOLDERS = ['fixtures', '__snapshots__'];
const SKIP = new Set(['node_modules', 'dist', '.git', 'cdktf.out']);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name) || name.startsWith('.')) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** why a file under test/ is misplaced, or null when its folder is allowed */
export function misplaced(relToTest: string): string | null {
  const parts = relToTest.split(sep).slice(0, -1);
  if (parts.length === 0) return relToTest === 'README.md' ? null : 'only README.md lies at the root of test/';
  if (CROSS_CUTTING.includes(parts[0]!)) return null;
  if (!SOURCE_FOLDERS.includes(parts[0]!)) return `test/${parts[0]}/ is neither a source folder (${SOURCE_FOLDERS.join(', ')}) nor a cross-cutting one (${CROSS_CUTTING.join(', ')})`;
  const fixtureAt = parts.findIndex((p) => FIXTURE_FOLDERS.includes(p));
  const mirrored = parts.slice(0, fixtureAt < 0 ? parts.length : fixtureAt);
  const source = join(ROOT, ...mirrored);
  if (!existsSync(source) || !statSync(source).isDirectory()) return `test/${mirrored.join('/')}/ mirrors ${mirrored.join('/')}/, which is not a source folder`;
  return null;
}

test('every file under test/ lies in a folder that mirrors a source folder, or in a cross-cutting one', () => {
  const wrong = walk(TEST)
    .map((file) => relative(TEST, file))
    .map((rel) => ({ rel, why: misplaced(rel) }))
    .filter((f) => f.why !== null)
    .map((f) => `test/${f.rel}: ${f.why}`);
  expect(wrong).toEqual([]);
});

test('no test file lies outside test/', () => {
  const outside = readdirSync(ROOT)
    .filter((name) => name !== 'test' && !SKIP.has(name) && !name.startsWith('.') && statSync(join(ROOT, name)).isDirectory())
    .flatMap((name) => walk(join(ROOT, name)))
    .filter((file) => /\.test\.[cm]?[jt]s$/.test(file))
    .map((file) => relative(ROOT, file));
  expect(outside).toEqual([]);
});

test('every test/….test.ts path named in the repository (docs, comments, CI lists, config) exists', () => {
  const TEXT = /\.(ts|js|md|txt|json|sh|py)$/;
  const PATH = /(?<![\w./-])test\/[\w./-]+\.test\.ts/g;
  const dangling = readdirSync(ROOT)
    .filter((name) => !SKIP.has(name) && (name === '.ci' || !name.startsWith('.')))
    .flatMap((name) => (statSync(join(ROOT, name)).isDirectory() ? walk(join(ROOT, name)) : [join(ROOT, name)]))
    .filter((file) => TEXT.test(file) && !file.endsWith('package-lock.json'))
    .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(PATH)].map((m) => ({ file: relative(ROOT, file), path: m[0] })))
    .filter(({ path }) => !existsSync(join(ROOT, path)))
    .map(({ file, path }) => `${file} names ${path}`);
  expect(dangling).toEqual([]);
});

test('the rule refuses what it should', () => {
  expect(misplaced(join('jobs', 'leases.test.ts'))).toMatch(/neither a source folder/);
  expect(misplaced(join('core', 'nowhere', 'x.test.ts'))).toMatch(/not a source folder/);
  expect(misplaced('x.test.ts')).toMatch(/only README.md/);
  expect(misplaced(join('core', 'jobs', 'fixtures', 'child.ts'))).toBeNull();
  expect(misplaced(join('harness', 'worker-handlers', 'x.ts'))).toBeNull();
});
