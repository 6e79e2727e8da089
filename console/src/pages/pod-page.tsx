// A pod's page: its status word (live), actions as buttons, conditions, ports as links, private
// address and DNS name, SSH, then tabs: Logs (following), Terminal, Events.
import { useCallback, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { PodView } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useLoad } from '../ui/hooks.ts';
import { useEvents } from '../ui/live.ts';
import { LogView } from '../ui/log-view.tsx';
import { ErrorAlert, Loading, PageTitle, Status, TabPanel, Tabs, usd, when } from '../ui/widgets.tsx';
import { PodActions } from './pod-actions.tsx';
import { PodPorts } from './pod-ports.tsx';
import { gpuText } from './pods-list.tsx';
import { Terminal } from './terminal.tsx';

export function PodPage() {
  const api = useApi();
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.id!;
  const pod = useLoad(() => api.pods.get(id), [id]);
  const [tab, setTab] = useState('logs');
  const [events, setEvents] = useState<string[]>([]);
  useEvents(
    (e) => {
      setEvents((old) => [...old, `${when(e.time)}  ${e.previousStatus ?? '—'} → ${e.status ?? 'removed'}${e.reason ? `: ${e.reason}` : ''} (${e.actor})`].slice(-200));
      pod.reload();
    },
    { resourceId: id },
  );
  const openLogs = useCallback((signal: AbortSignal) => api.pods.logs(id, { tail: 200 }, signal), [api, id]);
  if (pod.loading && !pod.data) return <Loading what="the pod" />;
  const p = pod.data;
  if (!p)
    return (
      <>
        <PageTitle>Pod {id}</PageTitle>
        <ErrorAlert error={pod.error} />
      </>
    );
  const net = p.globalNetworking as { enabled?: boolean; ip?: string; internalDns?: string } | undefined;
  const ssh = p.ssh as { proxy?: { command?: string } | null; direct?: { command?: string } | null } | undefined;
  const conditions = (p.conditions as { type: string; status: string; reason: string; message: string }[] | undefined) ?? [];
  return (
    <>
      <div class="page-head">
        <PageTitle>
          {p.name} <Status word={p.status} />
        </PageTitle>
        <PodActions pod={p} onDone={(next) => (next ? pod.set(next) : route('/console/pods'))} />
      </div>
      <ErrorAlert error={pod.error} />
      <dl class="facts">
        <dt>Id</dt>
        <dd class="mono">{p.id}</dd>
        <dt>Status</dt>
        <dd>
          {p.status}
          {p.statusReason ? ` — ${String(p.statusReason)}` : ''}
        </dd>
        <dt>Image</dt>
        <dd class="mono">{p.image}</dd>
        <dt>GPU</dt>
        <dd>{gpuText(p)}</dd>
        <dt>Data center</dt>
        <dd>{p.dataCenterId ?? '—'}</dd>
        <dt>Cost</dt>
        <dd>{usd(p.cost, 3)} per hour</dd>
        <dt>Private address</dt>
        <dd class="mono">{net?.enabled ? (net.ip ?? 'not assigned yet') : 'global networking off'}</dd>
        <dt>DNS name</dt>
        <dd class="mono">{net?.internalDns ?? '—'}</dd>
        <dt>SSH</dt>
        <dd class="mono">{ssh?.proxy?.command ?? ssh?.direct?.command ?? '—'}</dd>
        <dt>Created</dt>
        <dd>{when(p.createdAt)}</dd>
      </dl>
      <h2>Ports</h2>
      <PodPorts pod={p} />
      {conditions.length ? (
        <>
          <h2>Conditions</h2>
          <table class="list" aria-label="Conditions">
            <thead>
              <tr>
                <th scope="col">Condition</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {conditions.map((c) => (
                <tr>
                  <td>{c.type}</td>
                  <td>{c.status}</td>
                  <td>{c.reason}</td>
                  <td>{c.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      <Tabs
        tabs={[
          { id: 'logs', label: 'Logs' },
          ...(api.write ? [{ id: 'terminal', label: 'Terminal' }] : []),
          { id: 'events', label: 'Events' },
        ]}
        current={tab}
        onChange={setTab}
      />
      {tab === 'logs' ? (
        <TabPanel id="logs">
          <LogView key={p.status} label="Pod log" open={openLogs} />
        </TabPanel>
      ) : tab === 'terminal' ? (
        <TabPanel id="terminal">
          {p.status === 'RUNNING' ? <Terminal podId={p.id} /> : <p>The terminal opens on a RUNNING pod; this one is {p.status}.</p>}
        </TabPanel>
      ) : (
        <TabPanel id="events">
          <pre class="log" role="log" aria-label="Pod events" tabIndex={0}>
            {events.length ? events.join('\n') : 'Changes to this pod appear here as they happen.'}
          </pre>
        </TabPanel>
      )}
    </>
  );
}
