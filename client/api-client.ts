// The public-API client the CLI and the declarative engine use (GPUFLEET_URL, GPUFLEET_API_KEY).
// Problem+json answers become ApiError with the server's status, code, detail and errors.
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

export interface ApiClientOptions {
  url?: string;
  apiKey?: string;
}

export class ApiClient {
  readonly url: string;
  private readonly apiKey: string;

  constructor(opts: ApiClientOptions = {}) {
    this.url = (opts.url ?? process.env.GPUFLEET_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    const key = opts.apiKey ?? process.env.GPUFLEET_API_KEY;
    if (!key) throw new Error('Set GPUFLEET_API_KEY to an API key (gpufleet keys create, or the key printed at first start).');
    this.apiKey = key;
  }

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await fetch(this.url + path, {
      method,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    const data: unknown = text ? JSON.parse(text) : undefined;
    if (!res.ok) {
      const p = (data ?? {}) as { code?: string; detail?: string; errors?: string[]; title?: string };
      throw new ApiError(res.status, p.code ?? 'HTTP_' + res.status, p.detail ?? p.title ?? res.statusText, p.errors ?? []);
    }
    return data as T;
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
