// Fleet (operators): hosts with their status and GPUs (each GPU's health and incidents, its utilisation
// and memory live: host-gpu-usage.tsx), drain with a deadline and undrain, diagnose, refresh, and
// enrolment with its progress. Live from the event stream.
import { useState } from 'preact/hooks';
import { useApi } from '../api.ts';
import { useConfirm } from '../ui/confirm.tsx';
import { useLoad } from '../ui/hooks.ts';
import { useEvents } from '../ui/live.ts';
import { ErrorAlert, Field, fieldErrors, Loading, PageTitle, Status, when } from '../ui/widgets.tsx';
import { ApiError, responseError } from '../../../client/index.ts';
import { DiagnosisResult, type Diagnosis } from './host-diagnosis.tsx';
import { GpuUsageCharts, memoryText, percent, useHostMetrics } from './host-gpu-usage.tsx';

interface Gpu {
  index: number;
  uuid: string;
  name: string;
  memoryMiB: number;
  health?: string;
  incidents?: { kind?: string; code?: string; message?: string; at?: string; resolvedAt?: string | null }[];
}

interface Host {
  id: string;
  address: string;
  dataCenterId: string;
  status: string;
  statusReason: string | null;
  drained: boolean;
  drain: { deadline: string; total: number; moved: number; stopped: number; finishedAt: string | null } | null;
  facts: { gpus: Gpu[] };
  lastSeenAt: string | null;
}

function HostCard({ host, onChange }: { host: Host; onChange: () => void }) {
  const api = useApi();
  const confirm = useConfirm();
  const [deadline, setDeadline] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [diagnosis, setDiagnosis] = useState<{ busy: boolean; result: Diagnosis | null }>({ busy: false, result: null });
  const post = (path: string, body?: unknown) => api.client.post(`/v2/hosts/${encodeURIComponent(host.id)}${path}`, body).then(onChange);
  const diagnose = () => {
    setError(undefined);
    setDiagnosis({ busy: true, result: null });
    api.client.post<Diagnosis>(`/v2/hosts/${encodeURIComponent(host.id)}/diagnose`, {}).then(
      (result) => (setDiagnosis({ busy: false, result }), onChange()),
      (e: unknown) => (setDiagnosis({ busy: false, result: null }), setError(e)),
    );
  };
  const deadlineId = `deadline-${host.id}`;
  const metrics = useHostMetrics(host.id, host.facts.gpus.length > 0);
  const now = (uuid: string) => metrics.data?.gpus.find((g) => g.uuid === uuid)?.current;
  return (
    <article class="card" aria-labelledby={`host-${host.id}`}>
      <h2 id={`host-${host.id}`}>
        {host.address} <Status word={host.status} /> {host.drained ? <span class="tag">drained</span> : null}
      </h2>
      <p class="muted">
        <span class="mono">{host.id}</span> · {host.dataCenterId} · last seen {when(host.lastSeenAt)}
        {host.statusReason ? ` · ${host.statusReason}` : ''}
      </p>
      {host.drain ? (
        <p>
          Drain: {host.drain.moved} of {host.drain.total} pods moved, {host.drain.stopped} stopped; deadline {when(host.drain.deadline)}
          {host.drain.finishedAt ? `, finished ${when(host.drain.finishedAt)}` : ''}
        </p>
      ) : null}
      <table class="list" aria-label={`GPUs of ${host.address}`}>
        <thead>
          <tr>
            <th scope="col">GPU</th>
            <th scope="col">Model</th>
            <th scope="col">Memory</th>
            <th scope="col">Utilisation</th>
            <th scope="col">Memory used</th>
            <th scope="col">Health</th>
            <th scope="col">Incidents</th>
          </tr>
        </thead>
        <tbody>
          {host.facts.gpus.map((g) => (
            <tr>
              <td>{g.index}</td>
              <td>{g.name}</td>
              <td>{Math.round(g.memoryMiB / 1024)} GiB</td>
              <td>{now(g.uuid) ? percent(now(g.uuid)!.utilization) : '—'}</td>
              <td>{now(g.uuid) ? memoryText(now(g.uuid)) : '—'}</td>
              <td>
                <Status word={g.health ?? 'HEALTHY'} />
              </td>
              <td>{(g.incidents ?? []).filter((i) => !i.resolvedAt).map((i) => `${i.code ?? i.kind ?? ''} ${i.message ?? ''}`).join('; ') || 'none open'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {host.facts.gpus.length ? <GpuUsageCharts address={host.address} metrics={metrics} /> : null}
      <ErrorAlert error={error} />
      {api.admin ? (
      <div class="row">
        {host.drained ? (
          <button type="button" onClick={() => confirm({ label: 'Undrain', question: `Undrain ${host.address}?`, detail: 'New pods may be placed on it again.', run: () => post('/drain', { drained: false }) })}>
            Undrain
          </button>
        ) : (
          <>
            <label for={deadlineId}>Deadline</label>
            <input id={deadlineId} class="narrow" placeholder="e.g. 30m" value={deadline} onInput={(e) => setDeadline(e.currentTarget.value)} />
            <button
              type="button"
              onClick={() =>
                confirm({
                  label: 'Drain',
                  question: `Drain ${host.address}?`,
                  detail: deadline ? `No new pods; its pods move off before ${deadline}, and those that cannot are stopped then.` : 'No new pods are placed on it; running pods stay.',
                  run: () => post('/drain', deadline ? { drained: true, deadline } : { drained: true }),
                })
              }
            >
              Drain
            </button>
          </>
        )}
        <button type="button" disabled={diagnosis.busy} onClick={diagnose}>
          Diagnose
        </button>
        <button type="button" onClick={() => post('/refresh').catch(setError)}>
          Refresh
        </button>
      </div>
      ) : null}
      <DiagnosisResult hostName={host.address} {...diagnosis} />
    </article>
  );
}

function Enrol({ onDone }: { onDone: () => void }) {
  const api = useApi();
  const [ssh, setSsh] = useState('');
  const [key, setKey] = useState('');
  const [dc, setDc] = useState('');
  const [steps, setSteps] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const errs = fieldErrors(error);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setSteps([]);
    try {
      // progress comes as NDJSON lines (docs/fleet.md)
      const res = await api.client.fetch('/v2/hosts', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify({ ssh, privateKey: key, ...(dc ? { dataCenterId: dc } : {}) }),
      });
      if (!res.ok || !res.body) throw await responseError(res);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = JSON.parse(buf.slice(0, nl)) as { progress?: unknown; host?: { id: string }; problem?: { code?: string; detail?: string; status?: number; errors?: string[] } };
          buf = buf.slice(nl + 1);
          if (line.progress !== undefined) setSteps((s) => [...s, typeof line.progress === 'string' ? line.progress : JSON.stringify(line.progress)]);
          if (line.host) setSteps((s) => [...s, `enrolled: ${line.host!.id}`]);
          if (line.problem) throw new ApiError(line.problem.status ?? 500, line.problem.code ?? 'INTERNAL', line.problem.detail ?? 'enrolment failed', line.problem.errors ?? []);
        }
      }
      setKey('');
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="card">
      <summary>Enrol a host</summary>
      <form onSubmit={submit}>
        <ErrorAlert error={error} />
        <Field label="SSH address" hint="user@host[:port]" error={errs.ssh}>
          {(a) => <input {...a} class="mono" value={ssh} onInput={(e) => setSsh(e.currentTarget.value)} autocomplete="off" />}
        </Field>
        <Field label="Private key" hint="OpenSSH or PEM; stored encrypted." error={errs.privateKey}>
          {(a) => <textarea {...(a as object)} class="mono" rows={4} value={key} onInput={(e) => setKey((e.currentTarget as HTMLTextAreaElement).value)} />}
        </Field>
        <Field label="Data center" error={errs.dataCenterId}>
          {(a) => <input {...a} value={dc} onInput={(e) => setDc(e.currentTarget.value)} />}
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Enrolling…' : 'Enrol'}
        </button>
        {steps.length ? (
          <ol class="progress" aria-label="Enrolment progress" aria-live="polite">
            {steps.map((s) => (
              <li>{s}</li>
            ))}
          </ol>
        ) : null}
      </form>
    </details>
  );
}

export function FleetPage() {
  const api = useApi();
  const hosts = useLoad(async () => (api.session.operator ? (await api.client.get<{ hosts: Host[] }>('/v2/hosts')).hosts : []), []);
  useEvents((e) => {
    if (e.resourceType === 'host') hosts.reload();
  });
  if (!api.session.operator)
    return (
      <>
        <PageTitle>Fleet</PageTitle>
        <p>The fleet's hosts are shown to operators. This key's account is not an operator's.</p>
      </>
    );
  return (
    <>
      <PageTitle>Fleet</PageTitle>
      <ErrorAlert error={hosts.error} />
      {api.admin ? <Enrol onDone={hosts.reload} /> : null}
      {!hosts.data ? <Loading what="hosts" /> : hosts.data.length === 0 ? <p>No hosts enrolled yet.</p> : hosts.data.map((h) => <HostCard host={h} onChange={hosts.reload} />)}
    </>
  );
}
