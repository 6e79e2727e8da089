// What a failed pull tells the tenant: what failed, in our words, never what the daemon or the
// registry said. docker's message quotes whatever answered the daemon, and a registry may send the
// daemon to a service on the host's loopback or the cloud's metadata address (a token realm, a blob
// redirect) whose answer would then reach the pod's reason, events, logs and GraphQL (issue 18,
// docs/security.md). The raw text goes to the operator's log only.

export type PullFailureKind =
  | 'not-found'
  | 'unauthorized'
  | 'unreachable'
  | 'tls'
  | 'timed-out'
  | 'rate-limited'
  | 'registry-error'
  | 'corrupt'
  | 'platform'
  | 'no-space'
  | 'invalid-reference'
  | 'unknown';

export interface PullFailure {
  kind: PullFailureKind;
  /** a fixed sentence per kind: safe to show the tenant */
  reason: string;
}

const REASONS: Record<PullFailureKind, string> = {
  'not-found': 'image not found',
  unauthorized: 'unauthorized: the registry refused the credentials (or their absence)',
  unreachable: 'registry unreachable',
  tls: "registry unreachable: its TLS certificate or handshake was not accepted",
  'timed-out': 'timed out talking to the registry',
  'rate-limited': 'the registry refused: too many requests',
  'registry-error': 'the registry answered with an error',
  corrupt: 'the registry sent content that did not match its digest',
  platform: "the image has no build for the host's platform",
  'no-space': 'the host ran out of disk space during the pull',
  'invalid-reference': 'docker did not accept the image reference',
  unknown: "the pull failed (docker's message is in the operator's log)",
};

const RULES: [RegExp, PullFailureKind][] = [
  [/no space left on device/i, 'no-space'],
  [/invalid reference format/i, 'invalid-reference'],
  [/no matching manifest for/i, 'platform'],
  [/toomanyrequests|too many requests/i, 'rate-limited'],
  [/i\/o timeout|deadline exceeded|Client\.Timeout|handshake timeout|timed out/i, 'timed-out'],
  [/x509:|tls:|certificate|server gave HTTP response to HTTPS client/i, 'tls'],
  [/no such host|server misbehaving|connection refused|no route to host|network is unreachable|connection reset|dial tcp|lookup .* on /i, 'unreachable'],
  // "pull access denied …, repository does not exist or may require 'docker login'": docker cannot tell which
  [/pull access denied|repository does not exist/i, 'not-found'],
  [/unauthorized|authentication required|no basic auth credentials|login attempt .* failed|denied|forbidden/i, 'unauthorized'],
  [/manifest unknown|name unknown|blob unknown|not found|no such image/i, 'not-found'],
  [/digest|checksum|verification failed|failed to register layer|unexpected EOF/i, 'corrupt'],
  [/received unexpected HTTP status|error parsing HTTP|status code 5\d\d|internal server error|bad gateway|service unavailable/i, 'registry-error'],
];

/** an HTTP status docker reports beside a response body it could not read: judged by the status alone */
function byQuotedStatus(text: string): PullFailureKind | null {
  const m = /(?:error parsing HTTP|unexpected HTTP status:?|status code) (\d{3})/i.exec(text);
  if (!m) return null;
  const status = Number(m[1]);
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not-found';
  if (status === 429) return 'rate-limited';
  return 'registry-error';
}

/**
 * A failed pull's kind and reason from docker's output (the pull, its login and manifest check).
 * Where docker quotes a response it could not parse, only that response's HTTP status is read: the
 * body is whatever answered, and its words must not choose the reason either.
 */
export function classifyPullError(raw: string): PullFailure {
  const text = raw.replace(/\s+/g, ' ');
  const kind = byQuotedStatus(text) ?? RULES.find(([re]) => re.test(text))?.[1] ?? 'unknown';
  return { kind, reason: REASONS[kind] };
}

/**
 * A failed `docker run`/`docker start`: its message is the tenant's own container's (a missing
 * command, a bad mount) and stays, unless it is about fetching the image, which is classified as a pull.
 */
export function runFailureReason(raw: string): string {
  const pullish = /pull access denied|manifest unknown|unauthorized|toomanyrequests|error pulling|failed to resolve reference|error parsing HTTP|registry|blob/i;
  return pullish.test(raw) ? `fetching the image failed: ${classifyPullError(raw).reason}` : raw;
}
