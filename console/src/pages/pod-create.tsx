// Create a pod: name, image, GPU type and count (or from a template), disk, ports, environment, data
// center, interruptible. The API's own validation messages (422 `errors`, `$.field: …`) are shown at
// the field they name; a "?template=<id>" link starts from that template.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useApi } from '../api.ts';
import { envOf, listOf } from '../ui/form-values.ts';
import { useLoad } from '../ui/hooks.ts';
import { ErrorAlert, Field, fieldErrors, OtherFieldErrors, PageTitle, usd } from '../ui/widgets.tsx';

interface Form {
  templateId: string;
  name: string;
  image: string;
  args: string;
  gpuTypeId: string;
  gpuCount: string;
  disk: string;
  ports: string;
  env: string;
  dataCenterId: string;
  interruptible: boolean;
}

/** the form as the API's create body: fields left empty are not sent (the template's or the default hold) */
export function bodyOf(f: Form): Record<string, unknown> {
  const body: Record<string, unknown> = { name: f.name.trim() };
  if (f.templateId) body.templateId = f.templateId;
  if (f.image.trim()) body.image = f.image.trim();
  if (f.args.trim()) body.args = f.args.trim();
  if (f.gpuTypeId) body.gpu = { id: f.gpuTypeId, count: Number(f.gpuCount || '1') };
  if (f.disk.trim()) body.disk = Number(f.disk);
  const ports = listOf(f.ports);
  if (ports.length) body.ports = ports;
  const env = envOf(f.env);
  if (Object.keys(env).length) body.env = env;
  if (f.dataCenterId) body.dataCenterIds = [f.dataCenterId];
  if (f.interruptible) body.interruptible = true;
  return body;
}

/** the fields the form shows the API's messages at */
const SHOWN = ['name', 'image', 'args', 'gpu', 'disk', 'ports', 'env', 'dataCenterIds', 'templateId', 'interruptible'];

export function PodCreatePage() {
  const api = useApi();
  const { query, route } = useLocation();
  const templates = useLoad(() => api.templates.list(), []);
  const gpus = useLoad(() => api.catalog.gpus(), []);
  const dcs = useLoad(() => api.catalog.dataCenters(), []);
  const [f, setF] = useState<Form>({
    templateId: query.template ?? '',
    name: '',
    image: '',
    args: '',
    gpuTypeId: '',
    gpuCount: '1',
    disk: '',
    ports: '',
    env: '',
    dataCenterId: '',
    interruptible: false,
  });
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const errs = fieldErrors(error);
  const set = (k: keyof Form) => (e: Event) => {
    const t = e.currentTarget as HTMLInputElement;
    setF({ ...f, [k]: t.type === 'checkbox' ? t.checked : t.value });
  };
  const gpu = (gpus.data ?? []).find((g) => g.id === f.gpuTypeId);
  const price = Number((gpu?.price as { secure?: number } | undefined)?.secure ?? NaN);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const pod = await api.pods.create(bodyOf(f));
      route(`/console/pods/${encodeURIComponent(pod.id)}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageTitle>Create pod</PageTitle>
      <form class="card form" onSubmit={submit} noValidate>
        {error ? <ErrorAlert error={error} /> : null}
        <OtherFieldErrors errors={errs} shown={SHOWN} />
        <Field label="Template" error={errs.templateId} hint="Optional: start from a template; fields below override it.">
          {(a) => (
            <select {...(a as object)} value={f.templateId} onChange={set('templateId')}>
              <option value="">None</option>
              {(templates.data ?? []).map((t) => (
                <option value={t.id}>
                  {String(t.name ?? t.id)} ({String(t.image ?? '')})
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Name" error={errs.name}>
          {(a) => <input {...a} value={f.name} onInput={set('name')} autocomplete="off" />}
        </Field>
        <Field label="Image" error={errs.image} hint={f.templateId ? "Empty: the template's image." : 'e.g. ubuntu:24.04'}>
          {(a) => <input {...a} class="mono" value={f.image} onInput={set('image')} autocomplete="off" spellcheck={false} />}
        </Field>
        <Field label="Start command" error={errs.args} hint="Optional: the container's command, e.g. sleep infinity.">
          {(a) => <input {...a} class="mono" value={f.args} onInput={set('args')} autocomplete="off" spellcheck={false} />}
        </Field>
        <div class="row">
          <Field label="GPU type" error={errs.gpu}>
            {(a) => (
              <select {...(a as object)} value={f.gpuTypeId} onChange={set('gpuTypeId')}>
                <option value="">No GPU (or the template's)</option>
                {(gpus.data ?? []).map((g) => (
                  <option value={g.id}>{String(g.name ?? g.id)}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="GPU count">
            {(a) => <input {...a} type="number" min={1} max={16} value={f.gpuCount} onInput={set('gpuCount')} />}
          </Field>
          <Field label="Disk (GB)" error={errs.disk}>
            {(a) => <input {...a} type="number" min={1} value={f.disk} onInput={set('disk')} placeholder="default" />}
          </Field>
        </div>
        <Field label="Ports" error={errs.ports} hint="e.g. 8888/http 22/tcp">
          {(a) => <input {...a} class="mono" value={f.ports} onInput={set('ports')} autocomplete="off" />}
        </Field>
        <Field label="Environment" error={errs.env} hint="One KEY=value a line.">
          {(a) => <textarea {...(a as object)} class="mono" rows={3} value={f.env} onInput={set('env')} />}
        </Field>
        <div class="row">
          <Field label="Data center" error={errs.dataCenterIds}>
            {(a) => (
              <select {...(a as object)} value={f.dataCenterId} onChange={set('dataCenterId')}>
                <option value="">Any</option>
                {(dcs.data ?? []).map((d) => (
                  <option value={d.id}>{String(d.name ?? d.id)}</option>
                ))}
              </select>
            )}
          </Field>
          <label class="check">
            <input type="checkbox" checked={f.interruptible} onChange={set('interruptible')} /> Interruptible (spot)
          </label>
        </div>
        <p class="muted" aria-live="polite">
          {Number.isFinite(price) ? `Estimated: ${usd(price * Number(f.gpuCount || '1'), 3)} per hour` : ''}
        </p>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create pod'}
        </button>
      </form>
    </>
  );
}
