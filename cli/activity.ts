// `gpufleet billing <kind>`, `gpufleet events [-f]`, `gpufleet account`: what the account spent, what
// happened to its resources, and its balance.
import { Argument, Command, Option } from 'commander';
import { AccountApi, ApiClient, BILLING_KINDS, BillingApi, EventsApi, type BillingKind } from '../client/index.ts';
import type { EventView } from '../model/index.ts';
import { intArg, printJson, printRecord, printTable, withSpinner } from './output.ts';

const client = () => new ApiClient();

/** the record's resource id field for each kind (docs/billing.md) */
const ID_FIELD: Record<BillingKind, string> = { pods: 'podId', 'network-volumes': 'networkVolumeId', endpoints: 'endpointId', serverless: 'endpointId' };

export function billingCommand(): Command {
  return new Command('billing')
    .description('spend per time bucket and resource (docs/billing.md)')
    .addArgument(new Argument('<kind>', 'what was billed').choices(BILLING_KINDS))
    .option('--start <time>', 'RFC 3339 (default: 30 days before --end)')
    .option('--end <time>', 'RFC 3339 (default: now)')
    .addOption(new Option('--bucket <size>', 'bucket size (default day)').choices(['hour', 'day', 'week', 'month', 'year']))
    .option('--id <id>', 'only this pod, volume or endpoint')
    .option('--json', 'print JSON (records and metadata, as the API answers)')
    .action(async (kind: BillingKind, o: { start?: string; end?: string; bucket?: string; id?: string; json?: boolean }) => {
      const idField = kind === 'serverless' ? 'serverlessId' : ID_FIELD[kind];
      const answer = await withSpinner(`reading ${kind} billing`, o.json, () =>
        new BillingApi(client()).records(kind, { startTime: o.start, endTime: o.end, bucketSize: o.bucket, [idField]: o.id }),
      );
      if (o.json) return printJson(answer);
      printTable(
        ['from', 'to', ID_FIELD[kind], 'USD', 'gpu', 'cpu', 'disk'],
        answer.records.map((r) => [r.startTime, r.endTime, r[ID_FIELD[kind]], r.totalAmount, r.gpuAmount, r.cpuAmount, r.diskAmount]),
      );
      const totals = (answer.metadata.totals ?? {}) as Record<string, unknown>;
      console.log(`total: $${String(totals.totalAmount ?? 0)}`);
    });
}

const eventLine = (e: EventView) =>
  `${e.time} ${e.resourceType} ${e.resourceId} ${e.previousStatus ?? ''}${e.previousStatus || e.status ? ' → ' : ''}${e.status ?? e.type}${e.reason ? `: ${e.reason}` : ''} (by ${e.actor})`;

export function eventsCommand(): Command {
  return new Command('events')
    .description('status changes of your pods and workers (and hosts, for operators): the newest, then exit; -f follows')
    .option('--resource <id>', 'only this pod, worker or host')
    .option('--since <time>', 'RFC 3339: events at or after it')
    .option('--limit <n>', 'the newest n (default 100, at most the server keeps)', intArg)
    .option('-f, --follow', 'keep printing new events until Ctrl-C')
    .option('--json', 'print JSON (without -f the list; with -f one event per line)')
    .action(async (o: { resource?: string; since?: string; limit?: number; follow?: boolean; json?: boolean }) => {
      const api = new EventsApi(client());
      const query = { resourceId: o.resource, since: o.since, limit: o.limit };
      if (!o.follow) {
        const events = await withSpinner('reading events', o.json, () => api.list(query));
        if (o.json) return printJson(events);
        for (const e of events) console.log(eventLine(e));
        return;
      }
      const abort = new AbortController();
      const onSigint = () => abort.abort();
      process.once('SIGINT', onSigint);
      try {
        for await (const e of api.follow(query, abort.signal)) console.log(o.json ? JSON.stringify(e) : eventLine(e));
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
}

export function accountCommand(): Command {
  return new Command('account')
    .description('your account: credits, usage, what is held for running jobs, the balance')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const a = await withSpinner('reading the account', o.json, () => new AccountApi(client()).get());
      if (o.json) printJson(a);
      else printRecord(a);
    });
}
