// Serverless endpoints: each name links to its page; workers by state and the queue from /health.
import { useApi } from '../api.ts';
import { useInterval, useLoad } from '../ui/hooks.ts';
import { ErrorAlert, Loading, PageTitle } from '../ui/widgets.tsx';
import type { EndpointHealth, EndpointView } from '../../../client/index.ts';

function workersText(h: EndpointHealth | undefined): string {
  if (!h) return '—';
  const parts = Object.entries(h.workers)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  return parts.join(', ') || 'none';
}

export function ServerlessPage() {
  const api = useApi();
  const list = useLoad(async () => {
    const eps = await api.endpoints.list();
    const health = await Promise.all(eps.map((e) => api.jobs.health(e.id).catch(() => undefined)));
    return eps.map((e, i): [EndpointView, EndpointHealth | undefined] => [e, health[i]]);
  }, []);
  useInterval(list.reload, 5000);
  return (
    <>
      <PageTitle>Serverless</PageTitle>
      <ErrorAlert error={list.error} />
      {!list.data ? (
        <Loading what="endpoints" />
      ) : list.data.length === 0 ? (
        <p>No serverless endpoints yet. Create one with the API (POST /v2/serverless) or `gpufleet endpoints create`.</p>
      ) : (
        <table class="list" aria-label="Endpoints">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Workers (min–max)</th>
              <th scope="col">Workers by state</th>
              <th scope="col">In queue</th>
              <th scope="col">In progress</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map(([e, h]) => (
              <tr key={e.id}>
                <td>
                  <a href={`/console/serverless/${encodeURIComponent(e.id)}`}>{e.name}</a>
                </td>
                <td>{e.type}</td>
                <td>
                  {e.workers?.min ?? 0}–{e.workers?.max ?? 0}
                </td>
                <td>{workersText(h)}</td>
                <td>{h?.jobs.inQueue ?? '—'}</td>
                <td>{h?.jobs.inProgress ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
