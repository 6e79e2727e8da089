// The public-API client the CLI, the declarative engine and a browser console use (GPUFLEET_URL,
// GPUFLEET_API_KEY). Problem+json answers become ApiError with the server's status, code, detail
// and errors. Browser-safe: nothing here imports Node's modules (fetch, URLSearchParams, TextDecoder
// are in both; test/architecture/client-browser.test.ts bundles client/ for the browser). WebSockets
// come from a factory: Node 20 has no WebSocket client of its own, so the CLI registers one over `ws`
// (cli/node-websocket.ts); a browser's own, used by default, cannot send an Authorization header, so
// exec sessions go by a single-use ticket (pod-exec-socket.ts).

/** the part of a WebSocket the client uses: the standard API, which `ws` and browsers both have */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string | Uint8Array): void;
  close(code?: number): void;
  addEventListener(type: string, listener: (event: { data?: unknown; code?: number; message?: string; error?: unknown }) => void, options?: { once?: boolean }): void;
}

/** opens a WebSocket to `url` sending `headers` (the key) on the upgrade */
export type WebSocketFactory = (url: string, headers: Record<string, string>) => WebSocketLike;

/** the platform's own WebSocket (browsers; Node 22 and later), which sends no headers: opens only paths with their own credentials */
function platformWebSocket(): WebSocketFactory | null {
  const Native = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  return Native ? (url) => new Native(url) : null;
}

/** the environment where there is one (Node), none in a browser */
const env = (): Record<string, string | undefined> => (typeof process === 'undefined' ? {} : process.env);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors: string[] = [],
  ) {
    super(errors.length ? `${detail}\n  ${errors.join('\n  ')}` : detail);
    this.name = 'ApiError';
  }
}

/** a problem+json answer (docs/errors.md) as an ApiError: its status, code, detail (or title) and errors */
export function problemError(status: number, body: unknown, statusText = ''): ApiError {
  const p = (body !== null && typeof body === 'object' ? body : {}) as { code?: string; detail?: string; title?: string; errors?: string[] };
  return new ApiError(status, p.code ?? `HTTP_${status}`, p.detail ?? p.title ?? (statusText || `HTTP ${status}`), p.errors ?? []);
}

/** the ApiError of a refused answer, read from its problem+json body (any other body: its status line) */
export async function responseError(res: Response): Promise<ApiError> {
  return problemError(res.status, await res.json().catch(() => ({})), res.statusText);
}

/** No API key given and GPUFLEET_API_KEY unset: the CLI prints the message on one line and exits 2 (wrong usage). */
export class MissingApiKeyError extends Error {
  constructor() {
    super('GPUFLEET_API_KEY is not set: set it to an API key (gpufleet keys create, or the admin key printed at first start)');
    this.name = 'MissingApiKeyError';
  }
}

export interface ApiClientOptions {
  url?: string;
  apiKey?: string;
  /**
   * a browser signed in to the console (docs/console.md): no key; the session cookie goes by itself
   * (same origin) and these headers (the CSRF token) go on every request
   */
  session?: { headers: Record<string, string> };
  /** how webSocket() opens sockets; default ApiClient.webSocketFactory, else the platform's WebSocket (a browser's) */
  webSocket?: WebSocketFactory;
}

export class ApiClient {
  /** the factory of clients made without one (the CLI sets it to `ws`'s) */
  static webSocketFactory: WebSocketFactory | null = null;
  readonly url: string;
  /** the Authorization header, or the console session's headers */
  private readonly auth: Record<string, string>;
  private readonly openWebSocket: WebSocketFactory | null;

  constructor(opts: ApiClientOptions = {}) {
    this.url = (opts.url ?? env().GPUFLEET_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    if (opts.session) this.auth = { ...opts.session.headers };
    else {
      const key = opts.apiKey ?? env().GPUFLEET_API_KEY;
      if (!key) throw new MissingApiKeyError();
      this.auth = { authorization: `Bearer ${key}` };
    }
    this.openWebSocket = opts.webSocket ?? null;
  }

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await fetch(this.url + path, {
      method,
      headers: {
        ...this.auth,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    const data: unknown = text ? JSON.parse(text) : undefined;
    if (!res.ok) throw problemError(res.status, data, res.statusText);
    return data as T;
  }

  /** follows a server-sent event stream (a GET, or a POST of `body`): each event as it comes, until the server ends it or `signal` aborts */
  async *sse(path: string, signal?: AbortSignal, body?: unknown): AsyncGenerator<{ event: string; id?: string; data: string }> {
    const res = await fetch(this.url + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { ...this.auth, accept: 'text/event-stream', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    if (!res.ok || !res.body) throw await responseError(res);
    const decoder = new TextDecoder();
    let buf = '';
    // read()ing (not for await): browsers that cannot iterate a ReadableStream read it too
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value: chunk, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let event = 'message';
          let id: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon === 0) continue; // a comment (keep-alive)
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') event = value;
            else if (field === 'id') id = value;
            else if (field === 'data') data.push(value);
          }
          if (data.length) yield { event, ...(id !== undefined ? { id } : {}), data: data.join('\n') };
        }
      }
    } catch (e) {
      if (signal?.aborted) return;
      throw e;
    } finally {
      // the caller stopped early (break, return): the server sees the stream go
      void reader.cancel().catch(() => undefined);
    }
  }

  /**
   * a WebSocket to `path`, with the client's credentials on the upgrade (the key's Authorization
   * header: a factory over `ws`; `pods ssh --proxy`'s tunnel) or, `credentials: false`, none: a path
   * that carries its own (an exec ticket, pod-exec-socket.ts), which any WebSocket can open
   */
  webSocket(path: string, { credentials = true }: { credentials?: boolean } = {}): WebSocketLike {
    const open = this.openWebSocket ?? ApiClient.webSocketFactory ?? platformWebSocket();
    if (!open) throw new Error('no WebSocket factory: pass ApiClientOptions.webSocket, or set ApiClient.webSocketFactory (the CLI sets one over `ws`)');
    return open(this.url.replace(/^http/, 'ws') + path, credentials ? { ...this.auth } : {});
  }

  /** a plain fetch of `path` with the credentials added: for answers read as they come (NDJSON progress) */
  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(this.url + path, { ...init, headers: { ...this.auth, ...(init.headers as Record<string, string> | undefined) } });
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }
  post<T>(path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    return this.request<T>('POST', path, body ?? {}, headers);
  }
  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body);
  }
  delete(path: string): Promise<void> {
    return this.request<void>('DELETE', path);
  }
}
