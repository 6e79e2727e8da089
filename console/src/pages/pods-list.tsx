// Pods: filters (status, GPU type, data center, interruptible), each pod's name (a link to its
// page) and its status word as text, its actions as buttons, bulk actions on the selected ones, and
// live status from the event stream: an event about a pod reads that pod alone (never the whole list
// again) and puts it in, takes it out (gone, or no longer matching the filters) or updates its row;
// answers are applied in the order their requests were sent (OrderedRows), so a list read before an
// event never puts back what the event's answer changed.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, type PodAction, type PodView } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useConfirm } from '../ui/confirm.tsx';
import { useLoad } from '../ui/hooks.ts';
import { useEvents } from '../ui/live.ts';
import { OrderedRows } from '../ui/ordered-rows.ts';
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
  const pods = usePodRows(status, gpuTypeId, dataCenterId);
  const gpus = useLoad(() => api.catalog.gpus(), []);
  const dcs = useLoad(() => api.catalog.dataCenters(), []);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const confirm = useConfirm();

  const setFilter = (name: string, value: string) => {
    const q = new URLSearchParams({ status, gpuTypeId, dataCenterId, interruptible, [name]: value });
    for (const [k, v] of [...q.entries()]) if (!v) q.delete(k);
    const s = q.toString();
    route(`/console/pods${s ? `?${s}` : ''}`, true);
  };

  const shown = useMemo(
    () => pods.rows.filter((p) => (interruptible === '' ? true : String(p.interruptible === true) === interruptible)),
    [pods.rows, interruptible],
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
        <button type="button" class="small" onClick={pods.reload}>
          Refresh
        </button>
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
      {!pods.loaded && !pods.rows.length ? (
        <Loading what="pods" />
      ) : shown.length === 0 ? (
        <p>No pods{status || gpuTypeId || dataCenterId || interruptible ? ' match these filters' : ' yet'}.</p>
      ) : (
        <table class="list pods" aria-label="Pods" aria-rowcount={shown.length + 1} aria-busy={pods.busy}>
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
                  <PodActions pod={p} onDone={(next) => pods.put(p.id, next)} />
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

/** the list's rows for these filters: read once, then kept live from the event stream (see the top) */
function usePodRows(status: string, gpuTypeId: string, dataCenterId: string) {
  const api = useApi();
  const store = useRef(new OrderedRows<PodView>());
  const [, setVersion] = useState(0);
  const [loaded, setLoaded] = useState(false);
  const [busy, setBusy] = useState(0);
  const [error, setError] = useState<unknown>(undefined);
  /** id → whether another event came while its read was in flight (then it is read once more) */
  const reading = useRef(new Map<string, boolean>());
  const bump = () => setVersion((v) => v + 1);
  const matches = (p: PodView) => (!status || p.status === status) && (!gpuTypeId || p.gpu?.id === gpuTypeId) && (!dataCenterId || p.dataCenterId === dataCenterId);

  const reload = useCallback(() => {
    const rows = store.current;
    const seq = rows.begin();
    setBusy((n) => n + 1);
    api.pods.list({ status: status || undefined, gpuTypeId: gpuTypeId || undefined, dataCenterId: dataCenterId || undefined }).then(
      (list) => {
        if (store.current !== rows) return;
        rows.applyList(seq, list);
        setLoaded(true);
        setError(undefined);
      },
      (e: unknown) => store.current === rows && setError(e),
    ).finally(() => {
      setBusy((n) => n - 1);
      bump();
    });
  }, [api, status, gpuTypeId, dataCenterId]);

  useEffect(() => {
    store.current = new OrderedRows<PodView>();
    reading.current.clear();
    setLoaded(false);
    reload();
  }, [reload]);

  const readOne = (id: string) => {
    if (reading.current.has(id)) {
      reading.current.set(id, true);
      return;
    }
    reading.current.set(id, false);
    const rows = store.current;
    const seq = rows.begin();
    api.pods
      .get(id)
      .catch((e: unknown) => (e instanceof ApiError && e.status === 404 ? undefined : Promise.reject(e)))
      .then((p) => store.current === rows && rows.applyOne(seq, id, p && matches(p) ? p : undefined) && bump(), () => undefined)
      .finally(() => {
        const again = reading.current.get(id);
        reading.current.delete(id);
        if (again) readOne(id);
      });
  };

  useEvents((e) => {
    if (e.resourceType !== 'pod') return;
    // a pod the list does not show, whose new status the status filter leaves out: nothing to read
    if (status && e.status && e.status !== status && !store.current.has(e.resourceId)) return;
    readOne(e.resourceId);
  });

  return {
    rows: store.current.rows,
    loaded,
    busy: busy > 0,
    error,
    reload,
    /** the pod as an action answered it (undefined: terminated) */
    put: (id: string, p: PodView | undefined) => {
      const rows = store.current;
      if (rows.applyOne(rows.begin(), id, p && matches(p) ? p : undefined)) bump();
    },
  };
}
