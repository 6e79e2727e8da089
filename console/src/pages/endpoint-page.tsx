// A serverless endpoint's page: tabs Playground, Requests, Metrics, Logs, Workers.
import { useCallback, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { JobStatus, PodLogEvent } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useConfirm } from '../ui/confirm.tsx';
import { useInterval, useLoad } from '../ui/hooks.ts';
import { LogView } from '../ui/log-view.tsx';
import { ErrorAlert, Loading, PageTitle, Status, TabPanel, Tabs } from '../ui/widgets.tsx';
import { Playground } from './playground.tsx';
import { EndpointMetrics } from './endpoint-metrics.tsx';

export interface SentJob {
  job: JobStatus;
  sentAt: number;
}

function Requests({ endpointId, jobs, onChange }: { endpointId: string; jobs: SentJob[]; onChange: (j: JobStatus) => void }) {
  const api = useApi();
  const confirm = useConfirm();
  if (!jobs.length) return <p>Jobs sent from the Playground in this session appear here, with Cancel and Retry.</p>;
  return (
    <table class="list" aria-label="Requests">
      <thead>
        <tr>
          <th scope="col">Job</th>
          <th scope="col">Status</th>
          <th scope="col">Delay</th>
          <th scope="col">Execution</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {jobs.map(({ job }) => (
          <tr key={job.id}>
            <td class="mono">{job.id}</td>
            <td>
              <Status word={job.status} />
            </td>
            <td>{typeof job.delayTime === 'number' ? `${job.delayTime} ms` : '—'}</td>
            <td>{typeof job.executionTime === 'number' ? `${job.executionTime} ms` : '—'}</td>
            <td>
              <button type="button" class="small" onClick={async () => onChange(await api.jobs.status(endpointId, job.id))}>
                Refresh
              </button>
              {api.write && (job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS') ? (
                <button
                  type="button"
                  class="small danger"
                  onClick={() => confirm({ label: 'Cancel job', question: `Cancel job ${job.id}?`, danger: true, run: async () => onChange(await api.jobs.cancel(endpointId, job.id)) })}
                >
                  Cancel job
                </button>
              ) : null}
              {api.write && (job.status === 'FAILED' || job.status === 'TIMED_OUT') ? (
                <button type="button" class="small" onClick={async () => onChange(await api.jobs.retry(endpointId, job.id))}>
                  Retry
                </button>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Workers({ endpointId }: { endpointId: string }) {
  const api = useApi();
  const workers = useLoad(() => api.endpoints.workers(endpointId), [endpointId]);
  useInterval(workers.reload, 5000);
  if (!workers.data) return <Loading what="workers" />;
  if (!workers.data.length) return <p>No workers now (they start when jobs come, up to the endpoint's maximum).</p>;
  return (
    <table class="list" aria-label="Workers">
      <thead>
        <tr>
          <th scope="col">Worker</th>
          <th scope="col">State</th>
          <th scope="col">Reason</th>
        </tr>
      </thead>
      <tbody>
        {workers.data.map((w) => (
          <tr key={w.id}>
            <td class="mono">{w.id}</td>
            <td>
              <Status word={String(w.state ?? w.status ?? '—')} />
            </td>
            <td>{String(w.statusReason ?? '')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** every worker's log in one view, each line prefixed with its worker */
function AllLogs({ endpointId }: { endpointId: string }) {
  const api = useApi();
  const open = useCallback(
    (signal: AbortSignal) =>
      (async function* (): AsyncGenerator<PodLogEvent> {
        const workers = await api.endpoints.workers(endpointId);
        const streams = workers.map((w) => ({ id: w.id, it: api.endpoints.workerLogs(endpointId, w.id, { tail: 100 }, signal) }));
        const pending = new Map(streams.map((s) => [s.id, s.it.next().then((r) => ({ s, r }))]));
        while (pending.size) {
          const { s, r } = await Promise.race(pending.values());
          if (r.done) {
            pending.delete(s.id);
            continue;
          }
          if (r.value.event !== 'end') {
            const d = (() => {
              try {
                return JSON.parse(r.value.data) as { line?: string };
              } catch {
                return { line: r.value.data };
              }
            })();
            yield { ...r.value, data: JSON.stringify({ ...d, line: `[${s.id}] ${d.line ?? ''}` }) };
          }
          pending.set(s.id, s.it.next().then((r2) => ({ s, r: r2 })));
        }
      })(),
    [api, endpointId],
  );
  return <LogView label="Logs of all workers" open={open} />;
}

export function EndpointPage() {
  const api = useApi();
  const { params } = useRoute();
  const id = params.id!;
  const ep = useLoad(() => api.endpoints.get(id), [id]);
  const [tab, setTab] = useState('playground');
  const [jobs, setJobs] = useState<SentJob[]>([]);
  const track = (job: JobStatus) =>
    setJobs((old) => (old.some((j) => j.job.id === job.id) ? old.map((j) => (j.job.id === job.id ? { ...j, job: { ...j.job, ...job } } : j)) : [{ job, sentAt: Date.now() }, ...old].slice(0, 50)));
  if (!ep.data) return ep.error ? <ErrorAlert error={ep.error} /> : <Loading what="the endpoint" />;
  const e = ep.data;
  return (
    <>
      <PageTitle>{e.name}</PageTitle>
      <p class="muted">
        <span class="mono">{e.id}</span> · {e.type} · workers {e.workers?.min ?? 0}–{e.workers?.max ?? 0}
      </p>
      <Tabs
        tabs={[
          { id: 'playground', label: 'Playground' },
          { id: 'requests', label: 'Requests' },
          { id: 'metrics', label: 'Metrics' },
          { id: 'logs', label: 'Logs' },
          { id: 'workers', label: 'Workers' },
        ]}
        current={tab}
        onChange={setTab}
      />
      <TabPanel id={tab}>
        {tab === 'playground' ? (
          <Playground endpoint={e} onJob={track} />
        ) : tab === 'requests' ? (
          <Requests endpointId={id} jobs={jobs} onChange={track} />
        ) : tab === 'metrics' ? (
          <EndpointMetrics endpointId={id} />
        ) : tab === 'logs' ? (
          <AllLogs endpointId={id} />
        ) : (
          <Workers endpointId={id} />
        )}
      </TabPanel>
    </>
  );
}
