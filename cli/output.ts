// What the user-facing commands share: JSON or a table, a spinner only on a terminal (and never
// with --json, whose stdout a script parses), and option parsers that fail as usage errors (exit 2).
// cli-table3 and ora are loaded when a table or a spinner is shown, not at every start (docs/cli.md,
// "Start-up time").
import { createRequire } from 'node:module';
import { InvalidArgumentError } from 'commander';
import type Table from 'cli-table3';

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

const requireCjs = createRequire(import.meta.url);

/** a cli-table3 table; the package (CommonJS, so require() is synchronous) is read on first use */
export function newTable(options?: ConstructorParameters<typeof Table>[0]): Table.Table {
  const TableClass = requireCjs('cli-table3') as typeof Table;
  return new TableClass(options);
}

/** rows under a header */
export function printTable(head: string[], rows: (string | number)[][]): void {
  const t = newTable({ head });
  for (const r of rows) t.push(r);
  console.log(t.toString());
}

/** one record as field / value lines; nested values as compact JSON */
export function printRecord(record: Record<string, unknown>): void {
  const t = newTable();
  for (const [k, v] of Object.entries(record)) {
    if (v === undefined) continue;
    t.push({ [k]: typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v) });
  }
  console.log(t.toString());
}

/** a spinner on stderr when it is a terminal and the output is not --json; off, nothing at all */
async function spinner(text: string, json: boolean | undefined): Promise<{ stop(): unknown; fail(): unknown }> {
  // off, ora would still print the text once; a script reading stderr wants only errors there
  if (json || process.stderr.isTTY !== true) return { stop: () => undefined, fail: () => undefined };
  const { default: ora } = await import('ora');
  return ora({ text }).start();
}

/** runs `fn` under a spinner that fails (and rethrows) when it throws */
export async function withSpinner<T>(text: string, json: boolean | undefined, fn: () => Promise<T>): Promise<T> {
  const s = await spinner(text, json);
  try {
    const v = await fn();
    s.stop();
    return v;
  } catch (e) {
    s.fail();
    throw e;
  }
}

export function jsonArg(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new InvalidArgumentError('valid JSON');
  }
}

export function jsonObjectArg(value: string): Record<string, unknown> {
  const v = jsonArg(value);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InvalidArgumentError('a JSON object');
  return v as Record<string, unknown>;
}

export function intArg(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('a whole number');
  return n;
}

/** repeatable `KEY=VALUE` into an object */
export function keyValueArg(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('KEY=VALUE');
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/** repeatable or comma-separated values into a list */
export function listArg(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}
