// Pods: filters (status, GPU type, data center, interruptible), each pod's name (a link to its
// page) and its status word as text, its actions as buttons, bulk actions on the selected ones, and
// live status from the event stream.
import { useMemo, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { PodAction, PodView } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useConfirm } from '../ui/confirm.tsx';
import { useLoad } from '../ui/hooks.ts';
import { useEvents } from '../ui/live.ts';
import { ErrorAlert, Loading, PageTitle, Status, usd } from '../ui/widgets.tsx';
import { ACTIONS, PodActions } from './pod-actions.tsx';
import { useRowWindow } from '../ui/window-rows.ts';

/** a row's height in px (styles.css: table.pods tbody tr) */
const ROW_PX = 42;

const STATUSES = ['PROVISIONING', 'STARTING', 'RUNNING', 'EXITED', 'ERROR', 'TERMINATED'];

export function gpuText(p: PodView): string {
  if (p.gpu) return `${p.gpu.count} × ${p.gpu.id}`;
  const cpu = p.cpu as { id?: string; vcpuCount?: number } | undefined;
  return cpu ? `CPU ${cpu.id ?? ''} ${cpu.vcpuCount ?? ''} vCPU` : '—';
}

export function PodsPage() {
  const api = useApi();
  const { query, route } = useLocation();
  const status = query.status ?? '';
  const gpuTypeId = query.gpuTypeId ?? '';
  const dataCenterId = query.dataCenterId ?? '';
  const interruptible = query.interruptible ?? '';
  const pods = useLoad(() => api.pods.list({ status: status || undefined, gpuTypeId: gpuTypeId || undefined, dataCenterId: dataCenterId || undefined }), [status, gpuTypeId, dataCenterId]);
  const gpus = useLoad(() => api.catalog.gpus(), []);
  const dcs = useLoad(() => api.catalog.dataCenters(), []);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const confirm = useConfirm();
  const refreshing = useRef(new Set<string>());

  const setFilter = (name: string, value: string) => {
    const q = new URLSearchParams({ status, gpuTypeId, dataCenterId, interruptible, [name]: value });
    for (const [k, v] of [...q.entries()]) if (!v) q.delete(k);
    const s = q.toString();
    route(`/console/pods${s ? `?${s}` : ''}`, true);
  };

  const replace = (id: string, next: PodView | undefined) => {
    const list = pods.data ?? [];
    pods.set(next ? list.map((p) => (p.id === id ? next : p)) : list.filter((p) => p.id !== id));
  };

  // a pod's event: read that pod again (its status word and its actions); a new pod: the list again
  useEvents((e) => {
    if (e.resourceType !== 'pod' || refreshing.current.has(e.resourceId)) return;
    const known = pods.data?.some((p) => p.id === e.resourceId);
    if (!known) {
      pods.reload();
      return;
    }
    refreshing.current.add(e.resourceId);
    api.pods
      .get(e.resourceId)
      .then((p) => replace(e.resourceId, p), () => replace(e.resourceId, undefined))
      .finally(() => refreshing.current.delete(e.resourceId));
  });

  const shown = useMemo(
    () => (pods.data ?? []).filter((p) => (interruptible === '' ? true : String(p.interruptible === true) === interruptible)),
    [pods.data, interruptible],
  );

  const { body, win } = useRowWindow(shown.length, ROW_PX);
  const cols = api.write ? 7 : 6;

  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };

  const bulk = (action: PodAction, label: string) => {
    const chosen = shown.filter((p) => selected.has(p.id) && Array.isArray(p.actions) && (p.actions as string[]).includes(action));
    confirm({
      label,
      question: `${label} ${chosen.length} selected pod${chosen.length === 1 ? '' : 's'}?`,
      detail: chosen.map((p) => p.name).join(', ') || 'None of the selected pods allows this now.',
      danger: action === 'terminate',
      run: async () => {
        const results = await Promise.allSettled(chosen.map((p) => api.pods.act(p.id, action)));
        setSelected(new Set());
        pods.reload();
        const failed = results.filter((r) => r.status === 'rejected');
        if (failed.length) throw new Error(`${failed.length} of ${chosen.length} failed: ${(failed[0] as PromiseRejectedResult).reason}`);
      },
    });
  };

  return (
    <>
      <div class="page-head">
        <PageTitle>Pods</PageTitle>
        {api.write ? (
          <a class="button primary" href="/console/pods/new">
            Create pod
          </a>
        ) : null}
      </div>
      <form class="filters" aria-label="Filter pods" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={status} onChange={(e) => setFilter('status', e.currentTarget.value)}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          GPU type
          <select value={gpuTypeId} onChange={(e) => setFilter('gpuTypeId', e.currentTarget.value)}>
            <option value="">Any</option>
            {(gpus.data ?? []).map((g) => (
              <option value={g.id}>{String(g.name ?? g.id)}</option>
            ))}
          </select>
        </label>
        <label>
          Data center
          <select value={dataCenterId} onChange={(e) => setFilter('dataCenterId', e.currentTarget.value)}>
            <option value="">Any</option>
            {(dcs.data ?? []).map((d) => (
              <option value={d.id}>{String(d.name ?? d.id)}</option>
            ))}
          </select>
        </label>
        <label>
          Interruptible
          <select value={interruptible} onChange={(e) => setFilter('interruptible', e.currentTarget.value)}>
            <option value="">Any</option>
            <option value="true">Interruptible</option>
            <option value="false">On demand</option>
          </select>
        </label>
      </form>
      <ErrorAlert error={pods.error} />
      {api.write && selected.size > 0 ? (
        <div class="bulk" role="region" aria-label="Bulk actions">
          <span>{selected.size} selected</span>
          {ACTIONS.map((a) => (
            <button type="button" class={a.action === 'terminate' ? 'danger small' : 'small'} onClick={() => bulk(a.action, a.label)}>
              {a.label} selected
            </button>
          ))}
        </div>
      ) : null}
      {pods.loading && !pods.data ? (
        <Loading what="pods" />
      ) : shown.length === 0 ? (
        <p>No pods{status || gpuTypeId || dataCenterId || interruptible ? ' match these filters' : ' yet'}.</p>
      ) : (
        <table class="list pods" aria-label="Pods" aria-rowcount={shown.length + 1}>
          <colgroup>
            {api.write ? <col class="c-select" /> : null}
            <col />
            <col class="c-status" />
            <col />
            <col />
            <col class="c-cost" />
            <col class="c-actions" />
          </colgroup>
          <thead>
            <tr aria-rowindex={1}>
              {api.write ? (
                <th scope="col">
                  <span class="visually-hidden">Select</span>
                </th>
              ) : null}
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">GPU</th>
              <th scope="col">Data center</th>
              <th scope="col">$/h</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody ref={body}>
            {win.before ? (
              <tr aria-hidden="true" class="spacer" style={{ height: `${win.before}px` }}>
                <td colSpan={cols} />
              </tr>
            ) : null}
            {shown.slice(win.start, win.end).map((p, i) => (
              <tr key={p.id} data-pod-id={p.id} aria-rowindex={win.start + i + 2}>
                {api.write ? (
                  <td>
                    <input type="checkbox" aria-label={`Select ${p.name}`} checked={selected.has(p.id)} onChange={() => toggle(p.id)} />
                  </td>
                ) : null}
                <td>
                  <a href={`/console/pods/${encodeURIComponent(p.id)}`}>{p.name}</a>
                  {p.interruptible ? <span class="tag">interruptible</span> : null}
                </td>
                <td>
                  <Status word={p.status} />
                </td>
                <td>{gpuText(p)}</td>
                <td>{p.dataCenterId ?? '—'}</td>
                <td>{usd(p.cost, 3)}</td>
                <td>
                  <PodActions pod={p} onDone={(next) => replace(p.id, next)} />
                </td>
              </tr>
            ))}
            {win.after ? (
              <tr aria-hidden="true" class="spacer" style={{ height: `${win.after}px` }}>
                <td colSpan={cols} />
              </tr>
            ) : null}
          </tbody>
        </table>
      )}
    </>
  );
}
