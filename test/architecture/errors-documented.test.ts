// docs/errors.md documents the one error registry (model/base/errors.ts) completely: every code of
// ERROR_CODES has a row, every row names a registry code, once, and each row's status and title are
// the ones the problem+json answer carries (GpufleetError.status / .title).
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../model/index.ts';

const DOC = resolve(import.meta.dirname, '../../docs/errors.md');

interface Row {
  code: string;
  status: number;
  title: string;
  when: string;
}

/** the rows of the table whose first cell is a `CODE` */
function documentedCodes(markdown: string): Row[] {
  const rows: Row[] = [];
  for (const line of markdown.split('\n')) {
    const m = /^\|\s*`([A-Z0-9_]+)`\s*\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|(.*)\|\s*$/.exec(line);
    if (m) rows.push({ code: m[1]!, status: Number(m[2]), title: m[3]!, when: m[4]!.trim() });
  }
  return rows;
}

describe('docs/errors.md lists the error registry', () => {
  const rows = documentedCodes(readFileSync(DOC, 'utf8'));
  const registry = ERROR_CODES as Record<string, number>;

  it('reads the table it is meant to check', () => {
    // a reader that found no rows would pass the checks below
    expect(rows.length).toBeGreaterThan(30);
    expect(rows.map((r) => r.code)).toEqual(expect.arrayContaining(['BAD_REQUEST', 'VALIDATION_FAILED', 'INTERNAL']));
  });

  it('has a row for every registry code', () => {
    const documented = new Set(rows.map((r) => r.code));
    expect(Object.keys(registry).filter((c) => !documented.has(c))).toEqual([]);
  });

  it('has no row for a code that is not in the registry, and no code twice', () => {
    expect(rows.filter((r) => !(r.code in registry)).map((r) => r.code)).toEqual([]);
    const seen = rows.map((r) => r.code);
    expect(seen.filter((c, i) => seen.indexOf(c) !== i)).toEqual([]);
  });

  it("gives each code the registry's status and that status's title, and says when it happens", () => {
    const wrong = rows
      .filter((r) => r.code in registry)
      .filter((r) => r.status !== registry[r.code] || r.title !== STATUS_CODES[registry[r.code]!] || r.when.length < 10)
      .map((r) => `${r.code}: ${r.status} ${r.title} (registry: ${registry[r.code]} ${STATUS_CODES[registry[r.code]!]})`);
    expect(wrong).toEqual([]);
  });
});
