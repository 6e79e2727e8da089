// `gpufleet jobs run|stream|status|cancel|list`: jobs of a serverless endpoint (runpod-compat.md 3; `list` is
// the job history, GET /v2/serverless/{id}/jobs, docs/serverless.md). Exit 1 when
// the job ends FAILED or TIMED_OUT, as when the API refuses; `--sync` waits for the end, `--stream`
// prints each stream chunk (one JSON line) as it comes.
import { Command } from 'commander';
import { ApiClient, EndpointsApi, FINAL_JOB_STATUSES, JobsApi, type JobHistoryItem, type JobStatus } from '../client/index.ts';
import { intArg, jsonArg, printJson, printTable, withSpinner } from './output.ts';

const api = () => new JobsApi(new ApiClient());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function report(job: JobStatus, json: boolean | undefined): void {
  if (json) printJson(job);
  else {
    console.log(`${job.id} ${job.status}`);
    if (job.output !== undefined) console.log(JSON.stringify(job.output, null, 2));
    if (job.error !== undefined) console.error(typeof job.error === 'string' ? job.error : JSON.stringify(job.error));
  }
  if (job.status === 'FAILED' || job.status === 'TIMED_OUT') process.exitCode = 1;
}

/** polls until the job is final */
async function waitFinal(endpoint: string, job: JobStatus, pollMs: number): Promise<JobStatus> {
  let j = job;
  while (!FINAL_JOB_STATUSES.has(j.status)) {
    await sleep(pollMs);
    j = await api().status(endpoint, j.id);
  }
  return j;
}

async function streamJob(endpoint: string, id: string, json: boolean | undefined, pollMs: number): Promise<JobStatus> {
  for (;;) {
    const s = await api().stream(endpoint, id);
    for (const chunk of s.stream ?? []) console.log(JSON.stringify(json ? chunk : chunk.output));
    if (FINAL_JOB_STATUSES.has(s.status)) return s;
    if (!(s.stream ?? []).length) await sleep(pollMs);
  }
}

export function jobsCommand(): Command {
  const jobs = new Command('jobs').description("your endpoints' jobs");
  jobs
    .command('run')
    .description('queue a job; --sync waits for its end, --stream follows its stream')
    .argument('<endpoint>', 'endpoint id')
    .requiredOption('--input <json>', 'the job input, JSON', jsonArg)
    .option('--sync', 'wait for the job to end and print its output')
    .option('--stream', 'print stream chunks as they come, then the final status')
    .option('--poll <ms>', 'how often to poll while waiting', intArg, 500)
    .option('--json', 'print JSON')
    .action(async (endpoint: string, o: { input: unknown; sync?: boolean; stream?: boolean; poll: number; json?: boolean }) => {
      if (o.stream) {
        const queued = await api().run(endpoint, o.input);
        if (!o.json) console.error(`${queued.id} ${queued.status}`);
        const end = await streamJob(endpoint, queued.id, o.json, o.poll);
        // the stream answer carries no output; the final status does
        return report(await api().status(endpoint, end.id), o.json);
      }
      if (o.sync) {
        const job = await withSpinner(`running on ${endpoint}`, o.json, async () => waitFinal(endpoint, await api().runSync(endpoint, o.input), o.poll));
        return report(job, o.json);
      }
      const job = await withSpinner(`queueing on ${endpoint}`, o.json, () => api().run(endpoint, o.input));
      if (o.json) printJson(job);
      else console.log(`${job.id} ${job.status}`);
    });
  jobs
    .command('stream')
    .description("print a job's stream chunks (one JSON line each) not read before, then exit; -f follows until the job ends")
    .argument('<endpoint>', 'endpoint id')
    .argument('<job>', 'job id')
    .option('-f, --follow', 'keep polling until the job ends, then print its final status')
    .option('--poll <ms>', 'how often to poll while following', intArg, 500)
    .option('--json', 'print each chunk whole ({output}), and the final status as JSON')
    .action(async (endpoint: string, id: string, o: { follow?: boolean; poll: number; json?: boolean }) => {
      if (!o.follow) {
        const s = await api().stream(endpoint, id);
        for (const chunk of s.stream ?? []) console.log(JSON.stringify(o.json ? chunk : chunk.output));
        return;
      }
      const end = await streamJob(endpoint, id, o.json, o.poll);
      return report(await api().status(endpoint, end.id), o.json);
    });
  jobs
    .command('status')
    .description("a job's status (and output once final)")
    .argument('<endpoint>', 'endpoint id')
    .argument('<job>', 'job id')
    .option('--json', 'print JSON')
    .action(async (endpoint: string, id: string, o: { json?: boolean }) => report(await api().status(endpoint, id), o.json));
  jobs
    .command('cancel')
    .description('cancel a queued or running job')
    .argument('<endpoint>', 'endpoint id')
    .argument('<job>', 'job id')
    .option('--json', 'print JSON')
    .action(async (endpoint: string, id: string, o: { json?: boolean }) => {
      const job = await api().cancel(endpoint, id);
      if (o.json) printJson(job);
      else console.log(`${job.id} ${job.status}`);
    });
  jobs
    .command('list')
    .description("the endpoint's jobs kept by the queue, newest first (a page; --all walks every page)")
    .argument('<endpoint>', 'endpoint id')
    .option('--status <list>', 'only these statuses, comma-separated (e.g. FAILED,TIMED_OUT)')
    .option('--limit <n>', 'jobs per page (1-100)', intArg, 20)
    .option('--cursor <cursor>', 'the page after this one (printed after a page that has more)')
    .option('--all', 'every page')
    .option('--json', 'print JSON ({jobs, nextCursor}; with --all one array)')
    .action(async (endpoint: string, o: { status?: string; limit: number; cursor?: string; all?: boolean; json?: boolean }) => {
      const endpoints = new EndpointsApi(new ApiClient());
      const status = o.status ? o.status.split(',') : undefined;
      const all: JobHistoryItem[] = [];
      let cursor = o.cursor;
      let next: string | null;
      do {
        const page = await endpoints.jobs(endpoint, { ...(status ? { status } : {}), limit: o.limit, ...(cursor ? { cursor } : {}) });
        all.push(...page.jobs);
        next = page.nextCursor;
        cursor = next ?? undefined;
      } while (o.all && next);
      if (o.json) return printJson(o.all ? all : { jobs: all, nextCursor: next });
      const ms = (n: number | undefined) => (n === undefined ? '' : `${n} ms`);
      printTable(['ID', 'STATUS', 'CREATED', 'DELAY', 'EXECUTION', 'RETRIES'], all.map((j) => [j.id, j.status, j.createdAt, ms(j.delayTime), ms(j.executionTime), j.retries]));
      if (next && !o.all) console.error(`more: gpufleet jobs list ${endpoint} --cursor ${next}${o.status ? ` --status ${o.status}` : ''}`);
    });
  return jobs;
}
