// A server-sent events client for tests: fetch with a streaming body, parsed into events as the
// text/event-stream format defines them (id, event, data; comments skipped). next() waits for the
// next event (or throws after a timeout, or when the stream ends); close() aborts the request, as a
// client that goes away does.
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  contentType: string | null;
  /** the body of a response that is not a stream (an error) */
  text: string;
  next(timeoutMs?: number): Promise<SseEvent>;
  /** events until the stream ends (or the timeout): for streams that end on their own */
  rest(timeoutMs?: number): Promise<SseEvent[]>;
  readonly ended: boolean;
  close(): void;
}

export async function readSse(url: string, init: RequestInit = {}): Promise<SseStream> {
  const ac = new AbortController();
  const res = await fetch(url, { ...init, signal: ac.signal });
  const contentType = res.headers.get('content-type');
  if (!contentType?.startsWith('text/event-stream') || !res.body) {
    const text = await res.text();
    return { status: res.status, contentType, text, next: () => Promise.reject(new Error(`not a stream: ${res.status} ${text}`)), rest: async () => [], ended: true, close: () => ac.abort() };
  }
  const queue: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  let ended = false;
  let failure: unknown = null;
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    let ev: SseEvent = { id: undefined, event: 'message', data: '' };
    let hasData = false;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
          if (line === '') {
            if (hasData) queue.push(ev);
            ev = { id: undefined, event: 'message', data: '' };
            hasData = false;
            wake();
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'data') {
            ev.data = hasData ? `${ev.data}\n${value}` : value;
            hasData = true;
          } else if (field === 'id') ev.id = value;
          else if (field === 'event') ev.event = value;
        }
      }
    } catch (e) {
      if (!ac.signal.aborted) failure = e;
    } finally {
      ended = true;
      wake();
    }
  })();
  const next = async (timeoutMs = 20_000): Promise<SseEvent> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = queue.shift();
      if (e) return e;
      if (ended) throw new Error(`the stream ended${failure ? `: ${String(failure)}` : ''}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  };
  return {
    status: res.status,
    contentType,
    text: '',
    next,
    async rest(timeoutMs = 20_000) {
      const out: SseEvent[] = [];
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          out.push(await next(Math.max(1, deadline - Date.now())));
        } catch (e) {
          if (ended && queue.length === 0) return out;
          throw e;
        }
      }
    },
    get ended() {
      return ended;
    },
    close: () => ac.abort(),
  };
}
