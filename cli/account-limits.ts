// `gpufleet accounts limits <id> [--gpus N] [--gpus-type TYPE=N]… [--pods N] [--workers N] [--volume-gb N]
// [--spend-per-hour USD] [--monthly-budget USD] …` and `gpufleet accounts set-limits <id> …` (docs/teams.md):
// without a limit flag each limit beside its use; with flags (operators) they are set first, a number or
// `none` for unlimited, and the answer shown.
import { Command, InvalidArgumentError, Option } from 'commander';
import { AccountsApi, ApiClient } from '../client/index.ts';
import { jsonObjectArg, printJson, printTable, withSpinner } from './output.ts';
import { defined } from './resource-command.ts';

// `none` stays the string 'none' while options are parsed (commander turns a parser's null into ''),
// and becomes null, unlimited, in the body
const NONE = 'none';
const orNull = (v: unknown): unknown => (v === NONE ? null : v);

/** a whole number, or `none` (unlimited) */
function countOrNone(value: string): number | typeof NONE {
  if (value === NONE) return NONE;
  if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError('a whole number, or none');
  return Number(value);
}

function usdOrNone(value: string): number | typeof NONE {
  if (value === NONE) return NONE;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError('an amount in USD, or none');
  return n;
}

/** repeatable `TYPE=n` (or `TYPE=none`) into gpusByType */
function gpuTypeLimit(value: string, previous: Record<string, number | null> = {}): Record<string, number | null> {
  const eq = value.lastIndexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('GPU_TYPE=n, e.g. "NVIDIA H100 80GB HBM3=8"');
  const n = countOrNone(value.slice(eq + 1));
  return { ...previous, [value.slice(0, eq)]: n === NONE ? null : n };
}

interface Limit {
  limit: number | null;
  used: number;
}

/** the rows of a limits answer: one per limit, and one per GPU type */
function limitRows(limits: Record<string, unknown>): unknown[][] {
  const rows: unknown[][] = [];
  for (const [name, v] of Object.entries(limits)) {
    if (name === 'gpusByType') for (const [type, l] of Object.entries(v as Record<string, Limit>)) rows.push([`gpus: ${type}`, l.limit ?? 'unlimited', l.used]);
    else if (v && typeof v === 'object' && 'used' in v) rows.push([name, (v as Limit).limit ?? 'unlimited', (v as Limit).used]);
  }
  return rows;
}

function printLimits(answer: Record<string, unknown>, json: boolean | undefined): void {
  if (json) return printJson(answer);
  printTable(['limit', 'set to', 'used'], limitRows((answer.limits ?? {}) as Record<string, unknown>));
  console.log(`month ${String(answer.month)}, at the budget: ${String(answer.budgetAction ?? 'keep')}`);
}

const LIMIT_FIELDS = ['gpus', 'gpusByType', 'interruptibleGpus', 'pods', 'workers', 'volumeGb', 'spendPerHour', 'monthlyBudget', 'budgetAction'];

/** the options that set limits; `typeFlag` names the repeatable TYPE=n one */
function withLimitOptions(cmd: Command, typeFlag: string): Command {
  return cmd
    .option('--gpus <n>', 'GPUs held at once by on-demand pods and workers', countOrNone)
    .option(`--${typeFlag} <TYPE=n>`, 'GPUs of one type (repeatable)', gpuTypeLimit)
    .option('--interruptible-gpus <n>', 'GPUs held at once by interruptible pods', countOrNone)
    .option('--pods <n>', 'pods placed at once', countOrNone)
    .option('--workers <n>', 'serverless workers in service (the public cloud allows 60)', countOrNone)
    .option('--volume-gb <n>', 'network volume GB, all together', countOrNone)
    .option('--spend-per-hour <usd>', 'USD per hour of everything that accrues now (the public cloud defaults to 80)', usdOrNone)
    .option('--monthly-budget <usd>', 'USD per calendar month (UTC)', usdOrNone)
    .addOption(new Option('--budget-action <action>', 'running pods once the monthly budget is used up').choices(['keep', 'stop']))
    .option('--json', 'print JSON');
}

/** the limit flags given, as the PATCH body (`none` as null) */
const patchOf = (o: Record<string, unknown>): Record<string, unknown> =>
  // --gpus-type (limits) and --gpus-by-type (set-limits) are both gpusByType
  defined(Object.fromEntries(LIMIT_FIELDS.map((f) => [f, orNull(f === 'gpusByType' ? (o.gpusByType ?? o.gpusType) : o[f])])));

export function accountLimitsCommands(): Command[] {
  const api = () => new AccountsApi(new ApiClient());
  const show = withLimitOptions(
    new Command('limits')
      .description("an account's limits beside their use (your own account, or any for operators); with limit flags (operators) sets them first")
      .argument('<id>', 'the account id (gpufleet account)'),
    'gpus-type',
  ).action(async (id: string, o: Record<string, unknown> & { json?: boolean }) => {
    const patch = patchOf(o);
    const answer = Object.keys(patch).length
      ? await withSpinner('setting limits', o.json, () => api().setLimits(id, patch))
      : await withSpinner('reading limits', o.json, () => api().limits(id));
    printLimits(answer, o.json);
  });
  const set = withLimitOptions(
    new Command('set-limits').description('set limits of an account (operators); a number, or none for unlimited; the others stay').argument('<id>', 'the account id'),
    'gpus-by-type',
  )
    .option('--data <json>', 'other fields of the body, as a JSON object', jsonObjectArg)
    .action(async (id: string, o: Record<string, unknown> & { data?: Record<string, unknown>; json?: boolean }) => {
      printLimits(await withSpinner('setting limits', o.json, () => api().setLimits(id, { ...o.data, ...patchOf(o) })), o.json);
    });
  return [show, set];
}
