// Everything one account can see through the API (pods, templates, network volumes, registries,
// endpoints, keys, the account, its events and billing), read through the API (the billing records
// also from the store, below), for the fuzz tests' "a rejected request changes nothing the caller
// can see". Each collection is kept apart so a failed comparison names the one that changed.
//
// What legitimately moves with the clock is taken out, and nothing else: a key's `lastUsedAt`
// (written by any authenticated request, rejected or not, at most once a minute; the write also
// moves the key in the list, so keys are compared by id), the account's accrued `usage` and
// `clientBalance`, and pod `runtime` (uptime). Billing amounts of records still open grow with the
// clock too, so the billing reports are read over a window that ends at a fixed instant (`at`, taken
// before the request). A record opened after `at` cannot show in such a window, and the reports
// cannot tell one open record of a resource from two, so the account's billing records themselves
// are compared as well, read from the store (every fuzz test runs its control plane in-process).
import { expect } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';

export interface Observer {
  /** a key of the account (any scope): everything but the key list */
  key: string;
  /** an admin key of the same account: GET /v2/keys needs it */
  adminKey: string;
}

export type VisibleState = Record<string, unknown>;

const BILLING = ['pods', 'network-volumes', 'endpoints'] as const;
const EPOCH = '2000-01-01T00:00:00.000Z';

async function get(cp: TestControlPlane, path: string, key: string): Promise<unknown> {
  const res = await cp.api(path, { key });
  const text = await res.text();
  expect(res.status, `GET ${path} → ${res.status} ${text.slice(0, 300)}`).toBe(200);
  return JSON.parse(text) as unknown;
}

const omit = (o: unknown, keys: readonly string[]): unknown => {
  if (!o || typeof o !== 'object') return o;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
};

/**
 * The account's visible state as of `at` (ISO time; pass the same one to compare two reads).
 * `ownOnly`: templates of this account only, not the public ones of others (which their owners change).
 */
export async function visibleState(cp: TestControlPlane, who: Observer, at: string, ownOnly = false): Promise<VisibleState> {
  const q = (start: string, end: string) => `bucketSize=year&startTime=${encodeURIComponent(start)}&endTime=${encodeURIComponent(end)}`;
  const account = get(cp, '/v2/account', who.key) as Promise<{ id: string }>;
  const reads: [string, Promise<unknown>][] = [
    ['pods', get(cp, '/v2/pods?includeTerminated=true', who.key).then((b) => (b as { pods: unknown[] }).pods.map((p) => ({ ...(p as object), runtime: null })))],
    ['templates', get(cp, ownOnly ? '/v2/templates' : '/v2/templates?includePublic=true', who.key)],
    ['networkVolumes', get(cp, '/v2/network-volumes', who.key)],
    ['registries', get(cp, '/v2/registries', who.key)],
    ['endpoints', get(cp, '/v1/endpoints?includeTemplate=true', who.key)],
    // by id: writing lastUsedAt moves a key to the end of the store's list
    ['keys', get(cp, '/v2/keys', who.adminKey).then((b) => (b as { keys: { id: string }[] }).keys.sort((x, y) => x.id.localeCompare(y.id)).map((k) => omit(k, ['lastUsedAt'])))],
    ['account', account.then((a) => omit(a, ['usage', 'clientBalance']))],
    ['events', get(cp, '/v2/events?limit=1000', who.key)],
  ];
  for (const kind of BILLING) reads.push([`billing/${kind} until then`, get(cp, `/v2/billing/${kind}?${q(EPOCH, at)}`, who.key)]);
  reads.push(['billing records', account.then(async (a) => (await cp.services.store.list('billing', { accountId: a.id })).sort((x, y) => x.id.localeCompare(y.id)))]);
  const values = await Promise.all(reads.map(([, p]) => p));
  return Object.fromEntries(reads.map(([name], i) => [name, values[i]]));
}

/**
 * Reads the state of every observer, runs `request`, and when `rejected(answer)` says it was refused,
 * expects the caller's state unchanged. `others` (other accounts) are compared whatever the answer:
 * nothing a caller does may change another account's records (its own templates, not others' public ones).
 */
export async function expectNoChangeIfRejected<A>(
  cp: TestControlPlane,
  what: string,
  observers: { caller: Observer; others?: Observer[] },
  request: () => Promise<A>,
  rejected: (answer: A) => boolean,
): Promise<A> {
  const at = new Date().toISOString();
  const all = [observers.caller, ...(observers.others ?? [])];
  const read = (o: Observer, i: number) => visibleState(cp, o, at, i > 0);
  const before = await Promise.all(all.map(read));
  const answer = await request();
  const refused = rejected(answer);
  const after = await Promise.all(all.map((o, i) => (i === 0 && !refused ? Promise.resolve(before[0]) : read(o, i))));
  for (const [i, b] of before.entries())
    for (const [name, v] of Object.entries(b)) expect(after[i]![name], `${i === 0 ? 'caller' : `other account ${i}`}: ${name} changed by ${what}`).toStrictEqual(v);
  return answer;
}
