// Prints a pod's or a worker's log (server-sent events, docs/pods.md "Logs") as `docker logs` and
// `kubectl logs` do: without -f/--follow the tail and exit; with it, live lines until the log ends or
// Ctrl-C (exit 0). `--json`: one event's data per line.
import { Command, Option } from 'commander';
import { ApiError, type LogQuery, type PodLogEvent } from '../client/index.ts';
import { intArg } from './output.ts';

export interface LogOptions {
  tail?: number;
  since?: string;
  source?: 'container' | 'system';
  follow?: boolean;
  json?: boolean;
}

/** -f, --tail, --since, --source, --json on a logs command */
export function logOptions(c: Command): Command {
  return c
    .option('-f, --follow', 'keep printing new lines until the log ends (the container stops) or Ctrl-C')
    .option('--tail <n>', 'lines before the live ones (default 100, at most 5000)', intArg)
    .option('--since <time>', 'RFC 3339: the log from then on (--tail ignored)')
    .addOption(new Option('--source <source>', "container output or the pod's system events (both when omitted)").choices(['container', 'system']))
    .option('--json', 'print each event as one JSON line');
}

export function logQuery(o: LogOptions): LogQuery {
  return {
    ...(o.tail !== undefined ? { tail: o.tail } : {}),
    ...(o.since !== undefined ? { since: o.since } : {}),
    ...(o.source ? { source: o.source } : {}),
    follow: o.follow === true,
  };
}

/** reads the events `open` yields until they end or Ctrl-C; a `problem` event throws its ApiError */
export async function printLog(open: (signal: AbortSignal) => AsyncGenerator<PodLogEvent>, json: boolean | undefined): Promise<void> {
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  try {
    for await (const e of open(abort.signal)) {
      const data = JSON.parse(e.data) as { line?: string; source?: string; code?: string; detail?: string; status?: number; errors?: string[] };
      if (e.event === 'problem') throw new ApiError(data.status ?? 500, data.code ?? 'INTERNAL', data.detail ?? 'the log stream failed', data.errors ?? []);
      if (json) console.log(JSON.stringify(e.event === 'message' ? data : { event: e.event, ...data }));
      else if (e.event === 'message') console.log(data.source === 'system' ? `[system] ${data.line ?? ''}` : (data.line ?? ''));
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
}
