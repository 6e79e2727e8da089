// Webhooks: a job's `webhook` URL is POSTed the final job (the same JSON as its status) once it is
// final, with 2 retries 10 s apart (the public platform's rule). Private, loopback and link-local
// addresses are refused at submission (422) and again when connecting (a name may resolve elsewhere
// by then), unless the operator allows them (GPUFLEET_WEBHOOK_ALLOW_PRIVATE=true). With an outbox
// (the job queue, `resume`), a delivery is durable: it is pending from the job's final record on, each
// failed attempt is recorded with when the next is due, and it is cleared once delivered or given up,
// so a restart resumes it where it was (at least once: a crash between a 2xx answer and the clearing
// sends it again). Without one, retries live in memory only (docs/jobs.md, "Webhooks"). Which
// addresses are private is one rule, shared with image registries (model/rules/network-address.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { GpufleetError, isPrivateAddress } from '../../model/index.ts';
import type { Job } from '../../model/index.ts';
import type { JobQueue } from './job-queue.ts';

export const WEBHOOK_RETRIES = 2;
export const WEBHOOK_RETRY_DELAY_MS = 10_000;
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
/** a name is resolved at submission at most this long; past it the URL is accepted and checked when sent */
const SUBMIT_LOOKUP_TIMEOUT_MS = 2000;

function refuse(detail: string): never {
  throw new GpufleetError('VALIDATION_FAILED', `The webhook ${detail}`, { errors: [`$.webhook: ${detail}`] });
}

/** the host of a URL as an address or a name (brackets of an IPv6 literal removed) */
const hostOf = (u: URL): string => u.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Checks a job's webhook at submission: an http(s) URL whose host is not a private address. A name is
 * resolved (briefly); one that resolves to a private address is refused, one that does not resolve
 * is accepted and checked again when the webhook is sent.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse(`must be an http or https URL, not ${url.protocol}`);
  if (allowPrivate) return;
  const host = hostOf(url);
  const why = 'points at a private, loopback or link-local address, which the control plane does not call (an operator can allow it: GPUFLEET_WEBHOOK_ALLOW_PRIVATE=true)';
  if (isIP(host)) {
    if (isPrivateAddress(host)) refuse(why);
    return;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) refuse(why);
  let addrs: LookupAddress[] = [];
  try {
    addrs = await Promise.race([
      lookupAll(host, { all: true, verbatim: true }),
      new Promise<LookupAddress[]>((_, reject) => setTimeout(() => reject(new Error('timeout')), SUBMIT_LOOKUP_TIMEOUT_MS).unref()),
    ]);
  } catch {
    return; // unresolvable now: the send checks the address it connects to
  }
  if (addrs.some((a) => isPrivateAddress(a.address))) refuse(why);
}

/** dns lookup for the sender: fails the connection when the name resolves to a private address */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(Object.assign(new Error(`${hostname} resolves to the private address ${bad.address}`), { code: 'EPRIVATE' }), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};

export interface WebhookDelivery {
  jobId: string;
  url: string;
  attempts: number;
  delivered: boolean;
  /** the last attempt's failure (HTTP status or network error) */
  error?: string;
}

export interface WebhookSenderOptions {
  allowPrivate: boolean;
  /** between attempts; default 10000 */
  retryDelayMs?: number;
  attemptTimeoutMs?: number;
  /** told once per delivery, when it succeeded or its last attempt failed */
  onDelivery?: (d: WebhookDelivery) => void;
}

/** where deliveries are kept durably: the job queue's webhook members (JobQueue) */
export type WebhookOutbox = Pick<JobQueue, 'pendingWebhooks' | 'webhookAttempted' | 'webhookSettled' | 'webhookPollMs'>;

export class WebhookSender {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<AbortController>();
  /** jobs whose delivery this process is making (a resumed one and a new send never both run) */
  private readonly active = new Set<string>();
  private outbox: WebhookOutbox | null = null;
  private poll: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: WebhookSenderOptions) {}

  /**
   * Deliveries are recorded in `outbox` from now on, and the ones it holds pending from before (a
   * restart) are resumed: the next attempt at its due time, the body made from the job by `bodyOf`.
   * Resolves with how many were resumed. An outbox that replicas share is asked again every
   * `webhookPollMs`, for the deliveries this replica took over from one that stopped.
   */
  async resume(outbox: WebhookOutbox, bodyOf: (job: Job) => unknown): Promise<number> {
    this.outbox = outbox;
    if (outbox.webhookPollMs !== undefined && !this.closed && !this.poll) {
      this.poll = setInterval(() => void this.resumePending(outbox, bodyOf).catch(() => undefined), outbox.webhookPollMs);
      this.poll.unref();
    }
    return this.resumePending(outbox, bodyOf);
  }

  private async resumePending(outbox: WebhookOutbox, bodyOf: (job: Job) => unknown): Promise<number> {
    const pending = (await outbox.pendingWebhooks?.()) ?? [];
    let n = 0;
    for (const p of pending) {
      if (this.closed || this.active.has(p.job.id) || p.job.webhook === undefined) continue;
      this.deliver(p.job.webhook, p.job.id, JSON.stringify(bodyOf(p.job)), p.attempts + 1, p.nextAt);
      n++;
    }
    return n;
  }

  /** POSTs `body` to `url`: the first attempt now, then up to 2 retries `retryDelayMs` apart */
  send(url: string, jobId: string, body: unknown): void {
    if (this.closed || this.active.has(jobId)) return;
    this.deliver(url, jobId, JSON.stringify(body), 1, Date.now());
  }

  /** attempt `first` (1-based) at `at`, then the rest of the retries, each recorded in the outbox */
  private deliver(url: string, jobId: string, data: string, first: number, at: number): void {
    this.active.add(jobId);
    const later = (n: number, ms: number): void => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        attempt(n);
      }, Math.max(0, ms));
      t.unref();
      this.timers.add(t);
    };
    const attempt = (n: number): void => {
      void this.post(url, data).then(async (error) => {
        // closing: the attempt was cut off, and the delivery stays pending for the next start
        if (this.closed) return;
        if (error === null || n > WEBHOOK_RETRIES) {
          await this.outbox?.webhookSettled?.(jobId).catch(() => undefined); // not cleared: sent again after a restart
          this.active.delete(jobId);
          this.opts.onDelivery?.({ jobId, url, attempts: n, delivered: error === null, ...(error !== null ? { error } : {}) });
          return;
        }
        const delay = this.opts.retryDelayMs ?? WEBHOOK_RETRY_DELAY_MS;
        // recorded before it is scheduled: a restart from here on makes the next attempt, not this one again
        await this.outbox?.webhookAttempted?.(jobId, n, Date.now() + delay).catch(() => undefined);
        if (!this.closed) later(n + 1, delay);
      });
    };
    later(first, at - Date.now());
  }

  /** pending retries are dropped and attempts in flight aborted (with an outbox they resume at the next start) */
  close(): void {
    this.closed = true;
    clearInterval(this.poll);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const c of this.inFlight) c.abort();
  }

  /** one attempt: null on a 2xx answer, else why it failed */
  private post(raw: string, data: string): Promise<string | null> {
    return new Promise((resolve) => {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return resolve('not a URL');
      }
      const host = hostOf(url);
      if (!this.opts.allowPrivate && isIP(host) && isPrivateAddress(host)) return resolve(`${host} is a private address`);
      const ac = new AbortController();
      this.inFlight.add(ac);
      const lib = url.protocol === 'https:' ? https : http;
      const req = lib.request(
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), 'user-agent': 'gpufleet-webhook/1' },
          timeout: this.opts.attemptTimeoutMs ?? WEBHOOK_ATTEMPT_TIMEOUT_MS,
          signal: ac.signal,
          ...(this.opts.allowPrivate ? {} : { lookup: guardedLookup }),
        },
        (res) => {
          res.resume();
          res.on('end', () => done(res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`));
          res.on('error', (e) => done(e.message));
        },
      );
      const done = (r: string | null): void => {
        this.inFlight.delete(ac);
        resolve(r);
      };
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (e) => done(e.message));
      req.end(data);
    });
  }
}
