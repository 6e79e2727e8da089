// The Playground: the request body in a textbox labelled "Input", the estimated cost before sending,
// run or runsync, the status and streamed chunks as they come, then delay, execution time and cost
// beside the output; and the same request as code that follows the Input's edits.
import { useMemo, useRef, useState } from 'preact/hooks';
import { FINAL_JOB_STATUSES, type EndpointView, type JobStatus, type ResourceView } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useLoad } from '../ui/hooks.ts';
import { ErrorAlert, Status, TabPanel, Tabs, usd } from '../ui/widgets.tsx';
import { LANGUAGES, OPERATIONS, snippet, type Language, type Operation } from './snippets.ts';

const DEFAULT_BODY = '{\n  "input": {\n    "prompt": "Hello, GPU"\n  }\n}';

/** USD per second of one worker of the endpoint: its first GPU pool's price × GPU count */
export function perSecond(endpoint: EndpointView, gpus: ResourceView[]): { usd: number; gpu: string } | null {
  const e = endpoint as EndpointView & { gpu?: { pools?: string[]; count?: number } };
  for (const pool of e.gpu?.pools ?? []) {
    const g = gpus.find((x) => x.id === pool || x.pool === pool);
    const price = (g?.price as { secure?: number } | undefined)?.secure;
    if (g && typeof price === 'number') return { usd: (price * (e.gpu?.count ?? 1)) / 3600, gpu: String(g.name ?? g.id) };
  }
  return null;
}

function parseBody(text: string): { body: Record<string, unknown> | null; error: string | null } {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { body: null, error: 'The body must be a JSON object, e.g. {"input": {…}}.' };
    if (!('input' in v)) return { body: null, error: 'The body needs an "input" field.' };
    return { body: v as Record<string, unknown>, error: null };
  } catch (e) {
    return { body: null, error: `Not JSON: ${(e as Error).message}` };
  }
}

export function Playground({ endpoint, onJob }: { endpoint: EndpointView; onJob?: (j: JobStatus) => void }) {
  const api = useApi();
  const gpus = useLoad(() => api.catalog.gpus(), []);
  const [text, setText] = useState(DEFAULT_BODY);
  const [mode, setMode] = useState<'run' | 'runsync'>('runsync');
  const [job, setJob] = useState<JobStatus | null>(null);
  const [chunks, setChunks] = useState<unknown[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const [lang, setLang] = useState<Language>('curl');
  const [op, setOp] = useState<Operation>('runsync');
  const [lastExecMs, setLastExecMs] = useState<number | null>(null);
  const stop = useRef<AbortController | null>(null);
  const { body, error: bodyError } = parseBody(text);
  const rate = gpus.data ? perSecond(endpoint, gpus.data) : null;
  const timeoutS = typeof endpoint.timeout === 'number' ? endpoint.timeout / 1000 : null;

  const show = (j: JobStatus) => {
    setJob(j);
    onJob?.(j);
    if (typeof j.executionTime === 'number') setLastExecMs(j.executionTime);
  };

  const send = async (e: Event) => {
    e.preventDefault();
    if (!body) return;
    stop.current?.abort();
    const ac = new AbortController();
    stop.current = ac;
    setBusy(true);
    setError(undefined);
    setJob(null);
    setChunks([]);
    try {
      if (mode === 'runsync') {
        const j = await api.client.post<JobStatus>(`/v2/${encodeURIComponent(endpoint.id)}/runsync`, body);
        show(j);
        if (!FINAL_JOB_STATUSES.has(j.status)) await follow(j.id, ac.signal);
      } else {
        const j = await api.client.post<JobStatus>(`/v2/${encodeURIComponent(endpoint.id)}/run`, body);
        show(j);
        await follow(j.id, ac.signal);
      }
    } catch (err) {
      if (!ac.signal.aborted) setError(err);
    } finally {
      setBusy(false);
    }
  };

  /** reads the job's stream (each poll holds up to 5 s for a chunk) until it is final, then its status */
  const follow = async (id: string, signal: AbortSignal) => {
    for (;;) {
      if (signal.aborted) return;
      const s = await api.jobs.stream(endpoint.id, id);
      const got = (s.stream ?? []).map((c) => c.output);
      if (got.length) setChunks((old) => [...old, ...got]);
      setJob((old) => ({ ...(old ?? { id }), status: s.status }) as JobStatus);
      if (FINAL_JOB_STATUSES.has(s.status) && got.length === 0) break;
    }
    const final = await api.jobs.status(endpoint.id, id);
    show(final);
  };

  const code = useMemo(
    () => (body ? snippet(lang, op, { origin: location.origin, endpointId: endpoint.id, body, jobId: job?.id }) : `# fix the Input first: ${bodyError}`),
    [lang, op, text, job?.id, endpoint.id],
  );
  const execMs = typeof job?.executionTime === 'number' ? job.executionTime : null;

  return (
    <div class="playground">
      <form class="card" onSubmit={send}>
        <label for="pg-input">Input</label>
        <textarea
          id="pg-input"
          class="mono"
          rows={10}
          spellcheck={false}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          aria-invalid={bodyError ? true : undefined}
          aria-describedby="pg-input-msg"
        />
        <small id="pg-input-msg" class={bodyError ? 'field-error' : 'muted'}>
          {bodyError ?? 'The request body: {"input": …}, and optionally "webhook" or "policy".'}
        </small>
        <fieldset class="row">
          <legend>Send with</legend>
          <label class="check">
            <input type="radio" name="pg-mode" checked={mode === 'runsync'} onChange={() => setMode('runsync')} /> runsync (wait for the result)
          </label>
          <label class="check">
            <input type="radio" name="pg-mode" checked={mode === 'run'} onChange={() => setMode('run')} /> run (queue, then follow)
          </label>
        </fieldset>
        <p class="estimate" aria-live="polite">
          Estimated cost:{' '}
          {rate
            ? `${usd(rate.usd, 6)} per second of execution on ${rate.gpu}` +
              (lastExecMs !== null ? `; about ${usd((rate.usd * lastExecMs) / 1000, 6)} at the last run's ${lastExecMs} ms` : '') +
              (timeoutS ? `; at most ${usd(rate.usd * timeoutS, 4)} (the ${timeoutS} s timeout)` : '')
            : 'unknown (no price for this endpoint\'s GPU type)'}
        </p>
        {api.write ? (
          <button type="submit" class="primary" disabled={busy || !body}>
            {busy ? 'Running…' : 'Send'}
          </button>
        ) : (
          <p class="muted">This key may only read: it cannot send jobs.</p>
        )}
      </form>
      <section class="card" aria-label="Result">
        <h2>Result</h2>
        <ErrorAlert error={error} />
        {job ? (
          <>
            <dl class="facts">
              <dt>Job</dt>
              <dd class="mono" data-testid="job-id">
                {job.id}
              </dd>
              <dt>Status</dt>
              <dd aria-live="polite">
                <Status word={job.status} />
              </dd>
              <dt>Delay</dt>
              <dd>{typeof job.delayTime === 'number' ? `${job.delayTime} ms` : '—'}</dd>
              <dt>Execution</dt>
              <dd>{execMs !== null ? `${execMs} ms` : '—'}</dd>
              <dt>Cost</dt>
              <dd>{execMs !== null && rate ? `${usd((rate.usd * execMs) / 1000, 6)} (execution time × the worker's price)` : '—'}</dd>
            </dl>
            {chunks.length ? (
              <>
                <h3>Streamed</h3>
                <pre class="log" role="log" aria-label="Streamed chunks" tabIndex={0}>
                  {chunks.map((c) => JSON.stringify(c)).join('\n')}
                </pre>
              </>
            ) : null}
            <h3>Output</h3>
            <pre class="log" aria-label="Output" data-testid="job-output" tabIndex={0}>
              {job.output === undefined ? (job.error ? `error: ${String(job.error)}` : '—') : JSON.stringify(job.output, null, 2)}
            </pre>
          </>
        ) : (
          <p class="muted">Send the Input to see the status, streamed chunks and output here.</p>
        )}
      </section>
      <section class="card code" aria-label="Code">
        <h2>Code</h2>
        <p class="muted">The same request from a program: the key is read from $RUNPOD_API_KEY, which you set yourself.</p>
        <label>
          Operation{' '}
          <select value={op} onChange={(e) => setOp(e.currentTarget.value as Operation)}>
            {OPERATIONS.map((o) => (
              <option value={o}>/{o}</option>
            ))}
          </select>
        </label>
        <Tabs tabs={LANGUAGES.map((l) => ({ id: `code-${l.id}`, label: l.label }))} current={`code-${lang}`} onChange={(id) => setLang(id.slice(5) as Language)} />
        <TabPanel id={`code-${lang}`}>
          <pre class="code-block" aria-label={`${LANGUAGES.find((l) => l.id === lang)!.label} code for /${op}`} data-testid="code">
            {code}
          </pre>
          <button type="button" class="small" onClick={() => void navigator.clipboard?.writeText(code)}>
            Copy
          </button>
        </TabPanel>
      </section>
    </div>
  );
}
