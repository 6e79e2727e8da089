// Media outputs of public models (docs/media.md): bytes go to a MediaStore under a key made here from
// ids only, `<expiry, Unix s>-<128 random bits, hex>.<ext>`, and callers get a signed URL
// `<origin>/v2/media/<key>?signature=<HMAC-SHA256 over the path, base64url>`. The expiry is part of the
// signed path, so neither can be changed without the signature failing. URLs live 7 days (spec part
// 8, "output URL lifetime"); the sweeper deletes the bytes of expired keys every minute, on one
// control plane of those sharing a store when they are replicas of one database (`sweepLead`).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { GpufleetError } from '../../../model/index.ts';
import { extensionOf, mimeOfExtension } from './media-types.ts';
import { MEDIA_KEY_PATTERN, type ByteRange, type MediaObject, type MediaStore } from './media-store.ts';

export const MEDIA_URL_LIFETIME_MS = 7 * 24 * 3_600_000;
export const MEDIA_SWEEP_INTERVAL_MS = 60_000;
/** how long a sweep's lead lasts (`SweepLead`): three rounds, so the leader keeps it between its sweeps */
export const MEDIA_SWEEP_LEAD_MS = 3 * MEDIA_SWEEP_INTERVAL_MS;
/** where the control plane serves media (api/rest/media.ts) */
export const MEDIA_ROUTE_PREFIX = '/v2/media/';

export interface MediaServiceOptions {
  store: MediaStore;
  /** 32 bytes, derived from secret.key (SecretBox.deriveKey) */
  signingKey: Buffer;
  /** the origin callers reach the control plane at (GPUFLEET_PUBLIC_URL), read when a URL is made */
  origin: () => string;
  /** ms since the epoch; tests move it */
  clock?: () => number;
  lifetimeMs?: number;
  sweepIntervalMs?: number;
  /** a sweep that failed (it is tried again at the next interval) */
  onError?: (err: unknown, what: string) => void;
  /**
   * Who sweeps a store that several control planes share (replicas of one database on one bucket):
   * asked before each sweep, so one of them lists and deletes at a time (docs/replicas.md). Absent:
   * this control plane always sweeps (its own disk, or no database to agree through).
   */
  sweepLead?: SweepLead;
}

/** one replica's turn at a loop that runs once in all (core/replicas PgLeadership) */
export interface SweepLead {
  /** true: this one sweeps now (its turn is renewed); false: another one does */
  lead(): Promise<boolean>;
  /** gives the turn up, so another control plane sweeps at its next round */
  release(): Promise<void>;
}

export interface SavedMedia {
  key: string;
  url: string;
  /** ms since the epoch */
  expiresAt: number;
}

export interface OpenedMedia extends MediaObject {
  contentType: string;
  expiresAt: number;
  /** seconds the URL has left, for Cache-Control */
  maxAgeSeconds: number;
  /** the whole object's size */
  total: number;
  /** the part in `body` when a Range was served (206); absent: the whole object */
  range?: ByteRange;
}

/**
 * An HTTP `Range` header against an object of `size` bytes: one range (`a-b`, `a-`, `-n`) this
 * serves, or undefined for the whole object (no header, several ranges, or one it cannot read:
 * RFC 9110 lets a server ignore those). A range starting past the end is 416.
 */
export function resolveRange(header: string | undefined, size: number): ByteRange | undefined {
  const m = header === undefined ? null : /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) throw unsatisfiable(size);
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) throw unsatisfiable(size);
  return { start, end: m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1) };
}

function unsatisfiable(size: number): GpufleetError {
  return new GpufleetError('RANGE_NOT_SATISFIABLE', `The range lies outside the ${size} bytes of this media.`, { headers: { 'content-range': `bytes */${size}` } });
}

const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

export class MediaService {
  readonly store: MediaStore;
  private readonly key: Buffer;
  private readonly clock: () => number;
  private readonly lifetimeMs: number;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(private readonly opts: MediaServiceOptions) {
    if (opts.signingKey.length < 32) throw new GpufleetError('INTERNAL', 'the media signing key must be at least 32 bytes');
    this.store = opts.store;
    this.key = opts.signingKey;
    this.clock = opts.clock ?? Date.now;
    this.lifetimeMs = opts.lifetimeMs ?? MEDIA_URL_LIFETIME_MS;
  }

  /** stores the bytes; `mime` must be one the media types table serves */
  async save(bytes: Buffer, mime: string): Promise<SavedMedia> {
    const ext = extensionOf(mime);
    if (!ext) throw new GpufleetError('INTERNAL', `media type ${mime} is not served`);
    const expiresAt = Math.floor((this.clock() + this.lifetimeMs) / 1000) * 1000;
    const key = `${expiresAt / 1000}-${randomBytes(16).toString('hex')}.${ext}`;
    await this.store.put(key, bytes, mime);
    return { key, url: this.url(key), expiresAt };
  }

  /** the signed URL of a key */
  url(key: string): string {
    return `${this.opts.origin().replace(/\/+$/, '')}${MEDIA_ROUTE_PREFIX}${key}?signature=${this.sign(key)}`;
  }

  /**
   * The object behind a URL's key and signature (the part a Range header names, if any): 404 for a
   * key that cannot be one of ours or has no bytes, 403 for a missing or wrong signature, 410 once the
   * URL has expired, 416 for a range past the end.
   */
  async open(key: string, signature: unknown, rangeHeader?: string): Promise<OpenedMedia> {
    const m = MEDIA_KEY_PATTERN.exec(key);
    const contentType = m ? mimeOfExtension(m[3]!) : undefined;
    if (!m || !contentType) throw notFound();
    if (typeof signature !== 'string' || !SIGNATURE.test(signature) || !timingSafeEqual(Buffer.from(signature, 'latin1'), Buffer.from(this.sign(key), 'latin1')))
      throw new GpufleetError('FORBIDDEN', 'The media URL is not signed by this control plane (altered or incomplete).');
    const expiresAt = Number(m[1]) * 1000;
    if (this.clock() >= expiresAt)
      throw new GpufleetError('MEDIA_EXPIRED', `This media URL expired at ${new Date(expiresAt).toISOString()}; its bytes are deleted.`, { fields: { expiresAt: new Date(expiresAt).toISOString() } });
    const total = await this.store.size(key);
    if (total === undefined) throw notFound();
    const range = resolveRange(rangeHeader, total);
    const object = await this.store.get(key, range);
    if (!object) throw notFound();
    return { ...object, contentType, expiresAt, maxAgeSeconds: Math.floor((expiresAt - this.clock()) / 1000), total, ...(range ? { range } : {}) };
  }

  /** deletes the bytes of every expired key; resolves with how many (0 when another control plane sweeps: `sweepLead`) */
  sweep(): Promise<number> {
    this.sweeping ??= (async () => {
      if (this.opts.sweepLead && !(await this.opts.sweepLead.lead())) return 0;
      const now = this.clock();
      let n = 0;
      for await (const key of this.store.list()) {
        const m = MEDIA_KEY_PATTERN.exec(key);
        if (m && Number(m[1]) * 1000 <= now) {
          await this.store.delete(key);
          n++;
        }
      }
      return n;
    })().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** sweeps now and every interval until close */
  start(): void {
    if (this.timer) return;
    const run = () => void this.sweep().catch((e: unknown) => this.opts.onError?.(e, 'media sweep'));
    run();
    this.timer = setInterval(run, this.opts.sweepIntervalMs ?? MEDIA_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
    await this.opts.sweepLead?.release().catch(() => undefined);
    await this.store.close();
  }

  /** compared as text (both 43 characters), not as decoded bytes: base64url's last character carries 2 spare bits */
  private sign(key: string): string {
    return createHmac('sha256', this.key).update(`${MEDIA_ROUTE_PREFIX}${key}`).digest('base64url');
  }
}

function notFound(): GpufleetError {
  return new GpufleetError('NOT_FOUND', 'No media has this URL.');
}
