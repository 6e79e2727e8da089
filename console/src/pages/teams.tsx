// Teams: the account (balance, limits beside their use, spend per hour, the month's budget), API keys
// (create with a scope, the secret shown once; revoke), billing with cost over time, and the
// account's templates, network volumes and registries (created, edited, deleted: teams-resources.tsx).
import { useMemo, useState } from 'preact/hooks';
import { useApi } from '../api.ts';
import { Chart } from '../ui/chart.tsx';
import { useConfirm } from '../ui/confirm.tsx';
import { useLoad } from '../ui/hooks.ts';
import { ErrorAlert, Field, fieldErrors, Loading, PageTitle, usd, when } from '../ui/widgets.tsx';
import { RegistriesSection, TemplatesSection, VolumesSection } from './teams-resources.tsx';

function text(v: unknown): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'number') return String(Math.round(v * 10000) / 10000);
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${text(x)}`).join(', ') || 'none';
  return String(v);
}

function Limits() {
  const api = useApi();
  const account = useLoad(() => api.account.get(), []);
  const limits = useLoad(() => api.accounts.limits(api.session.accountId), []);
  return (
    <section aria-labelledby="h-account">
      <h2 id="h-account">Account</h2>
      <ErrorAlert error={account.error ?? limits.error} />
      {account.data ? (
        <dl class="facts">
          <dt>Account</dt>
          <dd class="mono">{account.data.id}</dd>
          <dt>Email</dt>
          <dd>{String(account.data.email ?? '—')}</dd>
          <dt>Credits left</dt>
          <dd>{usd(account.data.clientBalance, 2)}</dd>
          <dt>Used</dt>
          <dd>{usd(account.data.usage, 2)}</dd>
        </dl>
      ) : (
        <Loading what="the account" />
      )}
      {limits.data ? (
        <>
        <p>
          Month {String(limits.data.month ?? '—')}; when the budget is used up: {String(limits.data.budgetAction ?? 'keep')} running pods.
        </p>
        <table class="list" aria-label="Limits and use">
          <thead>
            <tr>
              <th scope="col">Limit</th>
              <th scope="col">Set to</th>
              <th scope="col">In use</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries((limits.data.limits as Record<string, unknown> | undefined) ?? limits.data)
              .filter(([k]) => k !== 'accountId')
              .map(([k, v]) => {
                const o = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
                const limit = o && ('limit' in o || 'used' in o || 'use' in o) ? o.limit : v;
                const used = o ? (o.used ?? o.use ?? o.current) : undefined;
                return (
                  <tr>
                    <th scope="row">{k}</th>
                    <td>{text(limit)}</td>
                    <td>{used === undefined ? '—' : text(used)}</td>
                  </tr>
                );
              })}
          </tbody>
        </table>
        </>
      ) : null}
    </section>
  );
}

const SCOPES = [
  { id: 'read', label: 'Read: see everything, change nothing' },
  { id: 'read_write', label: 'Read and write: pods, endpoints, jobs' },
  { id: 'admin', label: 'Admin: also keys' },
];

interface KeyView {
  id: string;
  name?: string;
  scope: string;
  prefix?: string;
  createdAt?: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
  expiresAt?: string | null;
}

function Keys() {
  const api = useApi();
  const confirm = useConfirm();
  const keys = useLoad(async () => (await api.client.get<{ keys: KeyView[] }>('/v2/keys')).keys, []);
  const [name, setName] = useState('');
  const [scope, setScope] = useState('read');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const errs = fieldErrors(error);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const k = await api.client.post<KeyView & { key: string }>('/v2/keys', { name, scope });
      setCreated({ name: k.name ?? name, key: k.key });
      setName('');
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="h-keys">
      <h2 id="h-keys">API keys</h2>
      <form class="card form" onSubmit={create}>
        <ErrorAlert error={error} />
        <div class="row">
          <Field label="Key name" error={errs.name}>
            {(a) => <input {...a} value={name} onInput={(e) => setName(e.currentTarget.value)} autocomplete="off" />}
          </Field>
          <Field label="Scope" error={errs.scope}>
            {(a) => (
              <select {...(a as object)} value={scope} onChange={(e) => setScope((e.currentTarget as HTMLSelectElement).value)}>
                {SCOPES.map((s) => (
                  <option value={s.id}>{s.label}</option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <button type="submit" class="primary">
          Create key
        </button>
      </form>
      {created ? (
        <div class="card notice" role="status">
          <p>
            The key <strong>{created.name}</strong>, shown this once: copy it now. It is not kept by this page.
          </p>
          <pre class="mono secret" aria-label="New API key">
            {created.key}
          </pre>
          <button type="button" class="small" onClick={() => void navigator.clipboard?.writeText(created.key)}>
            Copy
          </button>{' '}
          <button type="button" class="small" onClick={() => setCreated(null)}>
            Done, hide it
          </button>
        </div>
      ) : null}
      <ErrorAlert error={keys.error} />
      {keys.data ? (
        <table class="list" aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr>
                <td>{k.name ?? '—'}</td>
                <td class="mono">{k.prefix ?? k.id}</td>
                <td>{k.scope}</td>
                <td>{when(k.createdAt)}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td>
                  {k.revokedAt ? (
                    `revoked ${when(k.revokedAt)}`
                  ) : (
                    <button
                      type="button"
                      class="small danger"
                      onClick={() =>
                        confirm({ label: 'Revoke', question: `Revoke the key ${k.name ?? k.id}?`, detail: 'Programs and sessions using it stop working at once.', danger: true, run: async () => {
                            await api.client.delete(`/v2/keys/${encodeURIComponent(k.id)}`);
                            keys.reload();
                          }, })
                      }
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Loading what="keys" />
      )}
    </section>
  );
}

function Billing() {
  const api = useApi();
  const [kind, setKind] = useState<'pods' | 'endpoints' | 'network-volumes'>('pods');
  const data = useLoad(() => {
    const end = new Date();
    const start = new Date(end.getTime() - 2 * 86400_000);
    return api.billing.records(kind, { startTime: start.toISOString(), endTime: end.toISOString(), bucketSize: 'hour' });
  }, [kind]);
  const chart = useMemo(() => {
    const byTime = new Map<number, number>();
    for (const r of data.data?.records ?? []) {
      const t = Date.parse(String(r.startTime ?? ''));
      const amount = Number(r.totalAmount ?? 0);
      if (Number.isFinite(t)) byTime.set(t / 1000, (byTime.get(t / 1000) ?? 0) + amount);
    }
    if (!byTime.size) return { times: [], values: [] };
    // every hour of the range, 0 where nothing accrued, so the axis spans the two days
    const first = Math.floor((Date.now() - 2 * 86400_000) / 3600_000) * 3600;
    const times = Array.from({ length: 49 }, (_, i) => first + i * 3600);
    return { times, values: times.map((t) => Math.round((byTime.get(t) ?? 0) * 1e6) / 1e6) };
  }, [data.data]);
  return (
    <section aria-labelledby="h-billing">
      <h2 id="h-billing">Billing</h2>
      <label>
        Usage of{' '}
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as typeof kind)}>
          <option value="pods">Pods</option>
          <option value="endpoints">Serverless and models</option>
          <option value="network-volumes">Network volumes</option>
        </select>
      </label>
      <ErrorAlert error={data.error} />
      {chart.times.length ? <Chart title="Cost per hour (USD), last 2 days" times={chart.times} series={[{ label: 'USD', values: chart.values }]} /> : <p>No usage in the last 2 days.</p>}
    </section>
  );
}

export function TeamsPage() {
  const api = useApi();
  return (
    <>
      <PageTitle>Teams</PageTitle>
      <Limits />
      {api.admin ? <Keys /> : <p class="muted">API keys are managed with an admin key.</p>}
      <Billing />
      <TemplatesSection />
      <VolumesSection />
      <RegistriesSection />
    </>
  );
}
