// A serverless endpoint's page: tabs Playground, Requests, Metrics, Logs, Workers.
import { useCallback, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { PodLogEvent } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useInterval, useLoad } from '../ui/hooks.ts';
import { LogView } from '../ui/log-view.tsx';
import { ErrorAlert, Loading, PageTitle, Status, TabPanel, Tabs } from '../ui/widgets.tsx';
import { Playground } from './playground.tsx';
import { EndpointMetrics } from './endpoint-metrics.tsx';
import { Requests } from './endpoint-requests.tsx';

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
          <Playground endpoint={e} />
        ) : tab === 'requests' ? (
          <Requests endpointId={id} />
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
