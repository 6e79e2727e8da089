// Public models: the catalog (GET /v2/public-endpoints), a form per model (its input as JSON), run
// with runsync on its slug, the media output shown inline (audio plays, images show) with its cost.
import { useState } from 'preact/hooks';
import type { JobStatus, PublicEndpointView } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useLoad } from '../ui/hooks.ts';
import { ErrorAlert, Loading, PageTitle, Status, usd } from '../ui/widgets.tsx';

/** a same-origin media URL from the output (audio_url, image_url, …): only those are shown inline */
function mediaOf(output: unknown): { kind: 'audio' | 'image'; url: string }[] {
  const out: { kind: 'audio' | 'image'; url: string }[] = [];
  if (!output || typeof output !== 'object') return out;
  for (const [k, v] of Object.entries(output as Record<string, unknown>)) {
    if (typeof v !== 'string') continue;
    let url: URL;
    try {
      url = new URL(v, location.origin);
    } catch {
      continue;
    }
    if (url.origin !== location.origin) continue;
    if (/audio/.test(k)) out.push({ kind: 'audio', url: url.href });
    else if (/image/.test(k)) out.push({ kind: 'image', url: url.href });
  }
  return out;
}

/** what the job cost: a public model's output carries its charge (`cost`) and what it was for (`usage`) */
function costText(job: JobStatus): string {
  const out = (job.output && typeof job.output === 'object' ? job.output : {}) as { cost?: unknown; usage?: { units?: unknown; unit?: unknown } };
  const cost = typeof job.cost === 'number' ? job.cost : typeof out.cost === 'number' ? out.cost : undefined;
  if (cost === undefined) return '';
  const usage = typeof out.usage?.units === 'number' ? ` (${Number(out.usage.units.toPrecision(4))} ${String(out.usage.unit ?? 'units')})` : '';
  return `cost ${usd(cost, 6)}${usage}`;
}

function ModelForm({ model }: { model: PublicEndpointView }) {
  const api = useApi();
  const [text, setText] = useState(JSON.stringify({ input: (model.exampleInput as unknown) ?? { prompt: '' } }, null, 2));
  const [job, setJob] = useState<JobStatus | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const pricing = model.pricing as { unit?: string; usdPerUnit?: number; maxUnitsPerJob?: number } | undefined;
  const inputId = `model-input-${model.slug}`;
  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    setJob(null);
    try {
      setJob(await api.client.post<JobStatus>(`/v2/${encodeURIComponent(model.slug)}/runsync`, JSON.parse(text)));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={run} aria-labelledby={`model-${model.slug}`}>
      <h2 id={`model-${model.slug}`}>{String(model.name ?? model.slug)}</h2>
      <p class="muted">
        <span class="mono">{model.slug}</span> · {String(model.description ?? '')}
      </p>
      <p>
        Price: {pricing ? `${usd(pricing.usdPerUnit, 6)} per ${pricing.unit}` : '—'}
        {pricing?.maxUnitsPerJob ? `, at most ${usd((pricing.usdPerUnit ?? 0) * pricing.maxUnitsPerJob, 4)} a job` : ''}
      </p>
      <label for={inputId}>Input</label>
      <textarea id={inputId} class="mono" rows={5} value={text} onInput={(e) => setText(e.currentTarget.value)} spellcheck={false} />
      {api.write ? (
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Running…' : 'Run'}
        </button>
      ) : null}
      <ErrorAlert error={error} />
      {job ? (
        <div role="status">
          <p>
            <Status word={job.status} /> {costText(job)}
            {typeof job.executionTime === 'number' ? ` · ${job.executionTime} ms` : ''}
          </p>
          {mediaOf(job.output).map((m) => (m.kind === 'audio' ? <audio controls src={m.url} aria-label="Audio output" /> : <img src={m.url} alt="Image output" class="media" />))}
          <pre class="log">{JSON.stringify(job.output ?? job.error ?? null, null, 2)}</pre>
        </div>
      ) : null}
    </form>
  );
}

export function ModelsPage() {
  const api = useApi();
  const models = useLoad(() => api.models.list(), []);
  return (
    <>
      <PageTitle>Models</PageTitle>
      <ErrorAlert error={models.error} />
      {!models.data ? <Loading what="models" /> : models.data.length === 0 ? <p>No public models are published on this fleet.</p> : models.data.map((m) => <ModelForm model={m} />)}
    </>
  );
}
