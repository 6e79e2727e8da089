// The shell blocks of README.md and docs/*.md (docs/docs-tests.md): each is run by
// doc-blocks.test.ts against a test fleet, or preceded, on the line just before its fence, by
// `<!-- not run: <what it needs that the test machine lacks> -->`.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** fence languages that are shell blocks */
export const SHELL_LANGUAGES: ReadonlySet<string> = new Set(['sh', 'bash', 'console', 'shell', 'zsh', 'shell-session']);

export interface ShellBlock {
  /** path relative to the repository root */
  file: string;
  /** 1-based line of the opening fence */
  line: number;
  lang: string;
  /** the block's text, its fence's indentation removed */
  body: string;
  /** the reason of a `<!-- not run: … -->` mark on the line before the fence; null when unmarked */
  notRun: string | null;
  /** a line before the fence that looks like a mark but is not one exactly (a typo), else null */
  badMark: string | null;
}

const MARK = /^<!-- not run: (\S.*?) -->$/;
const MARK_LIKE = /<!--\s*not[ -]?run/i;
const OPEN = /^(\s*(?:>\s*)*)(`{3,}|~{3,})\s*([^\s`{]*)/;

/** the shell blocks of one markdown text, in order */
export function shellBlocks(file: string, text: string): ShellBlock[] {
  const lines = text.split('\n');
  const out: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    const close = new RegExp(`^\\s*(?:>\\s*)*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    const language = lang.toLowerCase();
    if (SHELL_LANGUAGES.has(language)) {
      const before = i > 0 ? lines[i - 1]!.trim() : '';
      const mark = MARK.exec(before);
      const body = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
        .join('\n');
      out.push({ file, line: i + 1, lang: language, body, notRun: mark ? mark[1]! : null, badMark: !mark && MARK_LIKE.test(before) ? before : null });
    }
    i = end; // skip the block (a fence inside it is text)
  }
  return out;
}

/**
 * The commands of a block as a script: a `console` block's lines after `$ ` (and the lines a
 * trailing backslash continues); other blocks whole.
 */
export function blockScript(block: Pick<ShellBlock, 'lang' | 'body'>): string {
  if (block.lang !== 'console' && block.lang !== 'shell-session') return block.body;
  const cmds: string[] = [];
  let continuing = false;
  for (const line of block.body.split('\n')) {
    if (continuing || /^\$ /.test(line)) {
      const cmd = continuing ? line : line.slice(2);
      cmds.push(cmd);
      continuing = /\\$/.test(cmd);
    }
  }
  return cmds.join('\n');
}

/** README.md and every .md under docs/ (sub-folders too), relative to `root`, sorted */
export async function docFiles(root: string): Promise<string[]> {
  const files = ['README.md'];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) await walk(rel);
      else if (e.name.endsWith('.md')) files.push(rel);
    }
  };
  await walk('docs');
  return files.sort();
}

/** every shell block of README.md and docs/ */
export async function allShellBlocks(root: string): Promise<ShellBlock[]> {
  const blocks: ShellBlock[] = [];
  for (const f of await docFiles(root)) blocks.push(...shellBlocks(f, await readFile(path.join(root, f), 'utf8')));
  return blocks;
}
