// The web console's bundle (docs/console.md): console/src with esbuild into <outDir>/console — the
// entry script and one stylesheet, named by their content's hash, and an index.html naming them; what
// the console loads on first use (the terminal's xterm.js, `import()`) is a chunk of its own beside them.
// bin/build.js runs it after tsc (so `npm ci`'s prepare builds it); the browser tests build their own
// copy elsewhere with buildConsole(dir). Nothing from another origin: every byte is served by /console.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** builds the console into `dir` (emptied first); answers the names of the files written */
export async function buildConsole(dir, { minify = true } = {}) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const result = await build({
    entryPoints: { app: path.join(root, 'console/src/main.tsx') },
    bundle: true,
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify,
    sourcemap: false,
    legalComments: 'linked',
    entryNames: '[name]-[hash]',
    splitting: true,
    chunkNames: 'chunk-[hash]',
    outdir: dir,
    metafile: true,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const entry = Object.entries(result.metafile.outputs).find(([f, o]) => o.entryPoint && f.endsWith('.js'));
  const js = entry && path.basename(entry[0]);
  const css = outputs.find((f) => f.endsWith('.css'));
  if (!js || !css) throw new Error(`the console build made no ${js ? 'stylesheet' : 'script'}: ${outputs.join(', ')}`);
  // the chunks the entry imports (code it shares with what loads on first use) are fetched beside it, not after it
  const preloads = entry[1].imports
    .filter((i) => i.kind === 'import-statement')
    .map((i) => `<link rel="modulepreload" href="/console/${path.basename(i.path)}">\n`)
    .join('');
  const html = readFileSync(path.join(root, 'console/index.html'), 'utf8')
    .replace('%CSS%', `/console/${css}`)
    .replace('%JS%', `/console/${js}`)
    .replace('</head>', `${preloads}</head>`);
  writeFileSync(path.join(dir, 'index.html'), html);
  return [...outputs, 'index.html'];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(process.argv[2] ?? path.join(root, 'dist/console'));
  const files = await buildConsole(dir);
  console.log(`console: ${files.join(', ')} in ${dir}`);
}
