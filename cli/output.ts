// What the user-facing commands share: JSON or a table, a spinner only on a terminal (and never
// with --json, whose stdout a script parses), and option parsers that fail as usage errors (exit 2).
import { InvalidArgumentError } from 'commander';
import Table from 'cli-table3';
import ora, { type Ora } from 'ora';

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** rows under a header */
export function printTable(head: string[], rows: (string | number)[][]): void {
  const t = new Table({ head });
  for (const r of rows) t.push(r);
  console.log(t.toString());
}

/** one record as field / value lines; nested values as compact JSON */
export function printRecord(record: Record<string, unknown>): void {
  const t = new Table();
  for (const [k, v] of Object.entries(record)) {
    if (v === undefined) continue;
    t.push({ [k]: typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v) });
  }
  console.log(t.toString());
}

/** a spinner on stderr when it is a terminal and the output is not --json */
export function spinner(text: string, json: boolean | undefined): Ora {
  const on = !json && process.stderr.isTTY === true;
  // off, ora would still print the text once; a script reading stderr wants only errors there
  return ora({ text, isEnabled: on, isSilent: !on }).start();
}

/** runs `fn` under a spinner that fails (and rethrows) when it throws */
export async function withSpinner<T>(text: string, json: boolean | undefined, fn: () => Promise<T>): Promise<T> {
  const s = spinner(text, json);
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
