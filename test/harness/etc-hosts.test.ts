// The /etc/hosts helper (etc-hosts.ts): lines added at once by several callers all arrive, and each
// removal takes out its own line only, leaving the others' and the file's former content.
import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { addHostsLine } from './etc-hosts.ts';

test('concurrent adds all arrive; each removal removes only its own line', async () => {
  const before = await readFile('/etc/hosts', 'utf8');
  const lines = Array.from({ length: 8 }, (_, i) => `127.0.0.1 gf-etc-hosts-${process.pid}-${i}.example`);
  const removers = await Promise.all(lines.map((l) => addHostsLine(l)));
  const all = (await readFile('/etc/hosts', 'utf8')).split('\n');
  for (const l of lines) expect(all.filter((x) => x === l)).toHaveLength(1);
  await Promise.all(removers.filter((_, i) => i % 2 === 0).map((r) => r()));
  const half = (await readFile('/etc/hosts', 'utf8')).split('\n');
  lines.forEach((l, i) => expect(half.includes(l), l).toBe(i % 2 === 1));
  await Promise.all(removers.map((r) => r()));
  const after = await readFile('/etc/hosts', 'utf8');
  for (const l of lines) expect(after).not.toContain(l);
  expect(after.trimEnd()).toBe(before.trimEnd());
});

test('a line with a newline is refused', async () => {
  await expect(addHostsLine('127.0.0.1 a\n127.0.0.1 b')).rejects.toThrow(/one line/);
});
