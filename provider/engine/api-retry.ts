// The engine's API client: the public client, plus patience with rate limits. A stack of a thousand
// pods is more requests than a minute's default quota (600); a 429 is refused before the handler
// runs, so retrying it, even a POST, cannot create anything twice.
import { ApiClient, ApiError, type ApiClientOptions } from '../../client/index.ts';

export class RetryingApiClient extends ApiClient {
  constructor(
    opts: ApiClientOptions = {},
    private readonly maxWaitMs = 30_000,
    private readonly attempts = 8,
  ) {
    super(opts);
  }

  override async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await super.request<T>(method, path, body, headers);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 429 || attempt >= this.attempts) throw e;
        await new Promise((r) => setTimeout(r, Math.min(this.maxWaitMs, 1000 * 2 ** (attempt - 1))));
      }
    }
  }
}
