// What the user-facing commands share: JSON or a table (colour only on a terminal that has it: never
// piped, never with NO_COLOR), a spinner only on a terminal (and never with --json, whose stdout a
// script parses), and option parsers that fail as usage errors (exit 2).
// cli-table3 and ora are loaded when a table or a spinner is shown, not at every start (docs/cli.md,
// "Start-up time").
import { createRequire } from 'node:module';
import { InvalidArgumentError } from 'commander';
import type Table from 'cli-table3';

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

const requireCjs = createRequire(import.meta.url);

/**
 * Colour on `stream` only when it is a terminal that has colours: Node's hasColors() reads NO_COLOR,
 * NODE_DISABLE_COLORS, FORCE_COLOR and TERM=dumb. Piped or redirected output never has escape codes.
 */
export function colorOn(stream: NodeJS.WriteStream = process.stdout): boolean {
  return stream.isTTY === true && typeof stream.hasColors === 'function' && stream.hasColors();
}

/** the width to fit output in: the terminal's, else COLUMNS, else 100 */
export function outputWidth(): number {
  const cols = process.stdout.isTTY ? process.stdout.columns : Number(process.env.COLUMNS);
  return Number.isInteger(cols) && cols! >= 40 ? cols! : 100;
}

/** a cli-table3 table, coloured only where colorOn(); the package (CommonJS, so require() is synchronous) is read on first use */
export function newTable(options: ConstructorParameters<typeof Table>[0] = {}): Table.Table {
  const TableClass = requireCjs('cli-table3') as typeof Table;
  return new TableClass(colorOn() ? options : { ...options, style: { ...options.style, head: [], border: [] } });
}

/** rows under a header */
export function printTable(head: string[], rows: unknown[][]): void {
  const t = newTable({ head });
  for (const r of rows) t.push(r.map(cell));
  console.log(t.toString());
}

/** a value in one cell: scalars as they are, lists of scalars joined, other objects as compact JSON */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null)) return v.join(', ');
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** label / value rows, wrapped to fit outputWidth() */
export function printFields(rows: [string, unknown][]): void {
  const shown = rows.filter(([, v]) => v !== undefined);
  const labelWidth = Math.min(24, Math.max(...shown.map(([k]) => k.length), 4) + 2);
  // two borders of the label column, one between, one after: 4 characters besides the contents
  const valueWidth = Math.max(20, outputWidth() - labelWidth - 3);
  // wrapped on words (a word longer than the column is cut there); no rule between the rows
  const t = newTable({ colWidths: [labelWidth, valueWidth], wordWrap: true, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } });
  for (const [k, v] of shown) t.push([k, cell(v)]);
  console.log(t.toString());
}

/** one record as field / value lines; nested values as compact JSON, wrapped to the width */
export function printRecord(record: Record<string, unknown>): void {
  printFields(Object.entries(record));
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

/** a number (USD, units): decimals allowed */
export function numberArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('a number');
  return n;
}

/** all of stdin as text, one trailing newline dropped (a secret piped or typed: `--password-stdin`) */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
