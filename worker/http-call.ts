// One HTTP call of the worker protocol, on node:http / node:https over the default keep-alive agents.
// A worker makes two or three calls per job; `fetch` costs several times more CPU per call than this
// (WHATWG streams, Request/Response objects, and an AbortSignal.timeout per call), which a worker
// running many short jobs pays on every one. Failures look as they did with fetch: a timeout is a
// DOMException named TimeoutError, an abort rejects with the signal's reason (an AbortError).
import http from 'node:http';
import https from 'node:https';

export interface HttpCall {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** the whole call, answer read included, fails with a TimeoutError after this many ms */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HttpAnswer {
  status: number;
  /** the content-type header as sent, '' when absent */
  contentType: string;
  /** the answer's body, read to its end (so the connection is reused), as UTF-8 */
  body: string;
}

export function httpCall(url: string, call: HttpCall): Promise<HttpAnswer> {
  const { signal } = call;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<HttpAnswer>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...call.headers };
    if (call.body !== undefined) headers['Content-Length'] = Buffer.byteLength(call.body);
    const req = (url.startsWith('https:') ? https : http).request(url, { method: call.method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        settle();
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', body });
      });
      res.on('error', fail);
    });
    const timer = setTimeout(() => req.destroy(new DOMException(`${call.method} ${url} timed out after ${call.timeoutMs} ms`, 'TimeoutError')), call.timeoutMs);
    const onAbort = (): void => void req.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    function settle(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    function fail(err: Error): void {
      settle();
      reject(err);
    }
    req.on('error', fail);
    req.end(call.body);
  });
}
