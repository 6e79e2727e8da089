// An endpoint's Requests tab: its job history from GET /v2/serverless/{id}/jobs (every job the
// account sent, from any client or browser, for as long as the queue keeps it), newest first, with a
// status filter, "Load more" (the route's cursor) and a refresh every few seconds. Cancel job for
// IN_QUEUE and IN_PROGRESS (/cancel), Retry for FAILED and TIMED_OUT (/retry: the same id), and Run
// again for CANCELLED (the job interface retries only FAILED and TIMED_OUT jobs, as the public
// platform: a new job with the same input, read from the history with include=input).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { JobHistoryItem } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useConfirm } from '../ui/confirm.tsx';
import { useInterval } from '../ui/hooks.ts';
import { ErrorAlert, Loading, Status, when } from '../ui/widgets.tsx';

const STATUSES = ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
const PAGE = 20;
const REFRESH_MS = 3000;

const ms = (n: number | undefined) => (typeof n === 'number' ? `${n} ms` : '—');

export function Requests({ endpointId }: { endpointId: string }) {
  const api = useApi();
  const confirm = useConfirm();
  const [status, setStatus] = useState('');
  const [jobs, setJobs] = useState<JobHistoryItem[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  /** how many reads of the list are out: the timer waits for them (a slow server still gets its answer shown, and Load more's page is kept) */
  const inFlight = useRef(0);
  const query = useCallback(
    async (limit: number, cursor?: string) => {
      inFlight.current++;
      try {
        return await api.endpoints.jobs(endpointId, { ...(status ? { status: [status] } : {}), include: ['error'], limit, ...(cursor ? { cursor } : {}) });
      } finally {
        inFlight.current--;
      }
    },
    [api, endpointId, status],
  );

  /** the reads sent: only the last one may change the list (an older one may be of the filter before) */
  const sent = useRef(0);
  /** the pages shown so far, read again from the top (as many jobs as shown, within the route's 100) */
  const refresh = useCallback(
    async (shown: number) => {
      const mine = ++sent.current;
      try {
        const p = await query(Math.min(100, Math.max(PAGE, shown)));
        if (mine !== sent.current) return;
        setJobs(p.jobs);
        setNext(p.nextCursor);
        setError(undefined);
      } catch (e) {
        if (mine === sent.current) setError(e);
      }
    },
    [query],
  );
  useEffect(() => {
    setJobs(null);
    void refresh(PAGE);
  }, [refresh]);
  // past the route's 100 a read from the top would cut the list short: then only Refresh reads it again
  // a tick while a read is out is skipped: it would make that read's answer stale before it arrives
  useInterval(() => void (inFlight.current === 0 && (jobs?.length ?? 0) <= 100 && refresh(jobs?.length ?? PAGE)), REFRESH_MS);

  const more = async () => {
    if (!next) return;
    const mine = ++sent.current;
    try {
      const p = await query(PAGE, next);
      if (mine !== sent.current) return;
      setJobs([...(jobs ?? []), ...p.jobs]);
      setNext(p.nextCursor);
    } catch (e) {
      if (mine === sent.current) setError(e);
    }
  };
  /** an action, then the list as it is now */
  const act = async (fn: () => Promise<unknown>) => {
    setActionError(undefined);
    try {
      await fn();
    } catch (e) {
      setActionError(e);
    }
    await refresh(jobs?.length ?? PAGE);
  };
  /** a cancelled job's input, from the history's pages of cancelled jobs */
  const inputOf = async (id: string): Promise<unknown> => {
    let cursor: string | undefined;
    for (;;) {
      const p = await api.endpoints.jobs(endpointId, { status: ['CANCELLED'], include: ['input'], limit: 100, ...(cursor ? { cursor } : {}) });
      const job = p.jobs.find((j) => j.id === id);
      if (job) return job.input;
      if (!p.nextCursor) throw new Error(`Job ${id} is no longer kept: its input cannot be sent again.`);
      cursor = p.nextCursor;
    }
  };

  return (
    <div>
      <div class="row">
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <button type="button" class="small" onClick={() => void refresh(jobs?.length ?? PAGE)}>
          Refresh
        </button>
        <span class="muted">Every job this account sent to the endpoint, from any client, for as long as the queue keeps it (30 min after it ends; 1 min for runsync).</span>
      </div>
      <ErrorAlert error={error ?? actionError} />
      {jobs === null ? (
        <Loading what="requests" />
      ) : jobs.length === 0 ? (
        <p>No jobs{status ? ` with status ${status}` : ''} kept for this endpoint.</p>
      ) : (
        <table class="list" aria-label="Requests">
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Status</th>
              <th scope="col">Sent</th>
              <th scope="col">Delay</th>
              <th scope="col">Execution</th>
              <th scope="col">Error</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr key={job.id}>
                <td class="mono">{job.id}</td>
                <td>
                  <Status word={job.status} />
                  {job.retries ? <span class="muted"> (retried {job.retries}×)</span> : null}
                </td>
                <td>{when(job.createdAt)}</td>
                <td>{ms(job.delayTime)}</td>
                <td>{ms(job.executionTime)}</td>
                <td class="mono">{job.error ? job.error.slice(0, 200) : ''}</td>
                <td>
                  <span class="actions">
                    {api.write && (job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS') ? (
                      <button
                        type="button"
                        class="small danger"
                        onClick={() => confirm({ label: 'Cancel job', question: `Cancel job ${job.id}?`, danger: true, run: () => act(() => api.jobs.cancel(endpointId, job.id)) })}
                      >
                        Cancel job
                      </button>
                    ) : null}
                    {api.write && (job.status === 'FAILED' || job.status === 'TIMED_OUT') ? (
                      <button type="button" class="small" onClick={() => void act(() => api.jobs.retry(endpointId, job.id))}>
                        Retry
                      </button>
                    ) : null}
                    {api.write && job.status === 'CANCELLED' ? (
                      <button type="button" class="small" title="A new job with the same input" onClick={() => void act(async () => api.jobs.run(endpointId, await inputOf(job.id)))}>
                        Run again
                      </button>
                    ) : null}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next ? (
        <button type="button" onClick={() => void more()}>
          Load more
        </button>
      ) : null}
    </div>
  );
}
