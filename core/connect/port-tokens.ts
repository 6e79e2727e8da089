// Signed tokens for a pod's HTTP port (docs/connect.md, "Signed links"): a short-lived link a browser
// opens once, and the cookie the proxy host gives for it. Each is HMAC-SHA256 over its kind and its
// payload (pod, port, account, key, expiry) with a key derived from the control plane's secret key, so
// every replica checks what any replica signed, and a token of one kind, pod, port or account is
// good for nothing else. `v1.<payload, base64url JSON>.<mac, base64url>`.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type PortTokenKind = 'link' | 'cookie';

export interface PortTokenClaims {
  podId: string;
  port: number;
  accountId: string;
  keyId: string;
  /** unix seconds */
  expiresAt: number;
}

interface Payload {
  p: string;
  n: number;
  a: string;
  k: string;
  e: number;
}

/** tokens longer than this are not read */
const MAX_TOKEN = 1024;

export class PortTokens {
  constructor(private readonly key: Buffer) {}

  sign(kind: PortTokenKind, c: PortTokenClaims): string {
    const payload: Payload = { p: c.podId, n: c.port, a: c.accountId, k: c.keyId, e: c.expiresAt };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `v1.${body}.${this.mac(kind, body)}`;
  }

  /** The claims of a good token of `kind` for this pod and port, not expired at `nowMs`; else null. */
  verify(kind: PortTokenKind, token: string, podId: string, port: number, nowMs: number): PortTokenClaims | null {
    if (token.length > MAX_TOKEN) return null;
    const m = /^v1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return null;
    const given = Buffer.from(m[2]!, 'base64url');
    const want = Buffer.from(this.mac(kind, m[1]!), 'base64url');
    if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
    let p: Partial<Payload>;
    try {
      p = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Partial<Payload>;
    } catch {
      return null;
    }
    if (p.p !== podId || p.n !== port || typeof p.a !== 'string' || typeof p.k !== 'string' || typeof p.e !== 'number') return null;
    if (p.e * 1000 <= nowMs) return null;
    return { podId: p.p, port: p.n, accountId: p.a, keyId: p.k, expiresAt: p.e };
  }

  private mac(kind: PortTokenKind, body: string): string {
    return createHmac('sha256', this.key).update(`gpufleet-port-${kind}\n${body}`).digest('base64url');
  }
}
