import type { Principal } from '../../../model/index.ts';
// How the public clients talk to /graphql, for the tests: runpod-python posts `{"query"}` with a
// Bearer key and its User-Agent; older releases (and the docs) put the key in `?api_key=` instead;
// runpodctl always posts `{"query", "variables"}`.

export interface GqlError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; errors?: string[] };
}

export interface GqlReply {
  status: number;
  headers: Headers;
  /** response shapes vary per query; tests assert on them directly */
  data: any;
  errors: GqlError[] | undefined;
}

export type Auth = { key: string | null; via?: 'bearer' | 'query' };

async function post(url: string, auth: Auth, body: unknown, extraHeaders: Record<string, string> = {}): Promise<GqlReply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders };
  let target = `${url}/graphql`;
  if (auth.key !== null) {
    if (auth.via === 'query') target += `?api_key=${encodeURIComponent(auth.key)}`;
    else headers.authorization = `Bearer ${auth.key}`;
  }
  const res = await fetch(target, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: { data?: unknown; errors?: GqlError[] };
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    throw new Error(`/graphql answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, headers: res.headers, data: json.data, errors: json.errors };
}

/** runpod-python's run_graphql_query: `{"query": text}`, no variables. */
export function python(url: string, auth: Auth, query: string): Promise<GqlReply> {
  return post(url, auth, { query }, { 'user-agent': 'RunPod-Python-SDK/1.7.0 (Linux; x86_64) Language/Python 3.11' });
}

/** runpodctl's GraphQL client: variables always present (`{}` when none). */
export function runpodctl(url: string, auth: Auth, query: string, variables: Record<string, unknown> = {}): Promise<GqlReply> {
  return post(url, auth, { query, variables }, { 'user-agent': 'runpod-cli/1.14.4 (linux; amd64)' });
}

/** Any body, for malformed-request tests. */
export function raw(url: string, auth: Auth, body: unknown): Promise<GqlReply> {
  return post(url, auth, body);
}

export function principalFor(accountId: string): Principal {
  return { accountId, keyId: 'test', scope: 'read_write', operator: false };
}
