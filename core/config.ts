// The interface points of mission.md, read once from the environment.
import path from 'node:path';
import { globalNetworkSettings, malformedAllowedRegistries, parseAllowedRegistries, parseDuration, parseQuotas, type GlobalNetworkSettings, type Quotas } from '../model/index.ts';
import { DEFAULT_PREEMPT_GRACE_S, MAX_PREEMPT_GRACE_S } from '../model/index.ts';
import { parseHeldRequestLimits, type HeldRequestLimits } from './fair-share/index.ts';
import { mediaS3FromEnv } from './public-models/index.ts';
import type { S3MediaConfig } from './public-models/index.ts';
import { proxyDomainProblem, type ProxySettings } from './connect/index.ts';

export interface ServerConfig {
  port: number;
  /** GPUFLEET_PUBLIC_URL: the origin callers reach this control plane at; media URLs name it (docs/media.md) */
  publicUrl?: string | undefined;
  /** GPUFLEET_MEDIA_S3_*: keep media outputs in an S3-compatible bucket instead of the data dir (docs/media.md) */
  mediaS3?: S3MediaConfig | undefined;
  host: string;
  dataDir: string;
  /**
   * GPUFLEET_DATABASE_URL: state in PostgreSQL (store/pg, docs/postgres.md) instead of the embedded
   * store under dataDir; several replicas may share it
   */
  databaseUrl?: string | undefined;
  /**
   * GPUFLEET_SECRET_KEY (32 bytes, base64): the key that seals secrets at rest. Required with a
   * database and the same on every replica; without one it replaces `<dataDir>/secret.key`.
   */
  secretKey?: Buffer | undefined;
  bootstrapKey: string | undefined;
  rateLimits: Quotas;
  /** run the provisioner's reconcile loop in this process (off in API-only tests) */
  provisioner: boolean;
  /** milliseconds between reconcile passes (each is a host heartbeat) */
  reconcileIntervalMs: number;
  /** milliseconds between runtime metric samples per host (docker stats, nvidia-smi) */
  metricsIntervalMs: number;
  /**
   * GPUFLEET_PULLS_PER_HOST (3), GPUFLEET_PULLS_PER_ACCOUNT (2, at most one less than per host),
   * GPUFLEET_PULL_STALL_MS (60000): image pulls beside the reconcile pass (docs/provisioner.md, "Image pulls")
   */
  pullsPerHost?: number;
  pullsPerAccount?: number;
  pullStallMs?: number;
  logLevel: string;
  /** GPUFLEET_METRICS_TOKEN: a bearer token that may read GET /metrics and nothing else (docs/metrics.md) */
  metricsToken?: string | undefined;
  /**
   * GPUFLEET_WORKER_URL: the origin serverless workers call (job-take, job-done, ping) from inside
   * their containers on the hosts. Unset: `http://host.docker.internal:<port>` (docs/serverless.md).
   */
  workerUrl?: string | undefined;
  /**
   * GPUFLEET_WORKER_RELAY=on|off: the worker relay (docs/serverless.md, "Reaching the control plane"):
   * each host's workers reach the control plane over its SSH connection. Unset: on exactly when
   * GPUFLEET_WORKER_URL is unset and HOST is a loopback address; never with GPUFLEET_WORKER_URL set.
   */
  workerRelay?: 'on' | 'off' | undefined;
  /**
   * GPUFLEET_WEBHOOK_ALLOW_PRIVATE=true: job webhooks may call private, loopback and link-local
   * addresses (refused otherwise: the control plane would call into its own network for any user)
   */
  webhookAllowPrivate?: boolean;
  /**
   * GPUFLEET_ALLOWED_REGISTRIES=host[:port],…: registries a tenant's image may name although they are
   * on a loopback, private or link-local address or have a local name (an in-fleet mirror); exact
   * host and port, lower case (model/rules/image-registry.ts, docs/security.md)
   */
  allowedRegistries?: string[];
  /**
   * GPUFLEET_WORKER_POLL_MS: how long job-take and job-stop hold a worker's request before 204
   * (default 60000; lower it behind a proxy that cuts idle requests sooner)
   */
  workerPollMs?: number;
  /**
   * GPUFLEET_LB_DOMAIN: load-balancing endpoints also answer at `<endpoint id>.<domain>` (any path),
   * besides `/v2/<endpoint id>/…` (docs/gateway.md); the operator points `*.<domain>` here
   */
  lbDomain?: string | undefined;
  /**
   * GPUFLEET_PROXY_DOMAIN: pods' HTTP ports answer at `<pod id>-<port>.<domain>` (docs/connect.md); a
   * registrable domain apart from the control plane's origin (checked at start). Unset: no port URLs.
   * GPUFLEET_PROXY_SCHEME (https, or http): how the operator's TLS front serves it; the URLs name it.
   */
  proxyDomain?: string | undefined;
  proxyScheme?: 'https' | 'http';
  /** GPUFLEET_EXEC_IDLE_TIMEOUT_MS: an interactive exec session with no byte either way for this long ends (default 30 min) */
  execIdleTimeoutMs?: number;
  /** GPUFLEET_CONSOLE_DIR: the built web console served at /console (default: the build's dist/console; docs/console.md) */
  consoleDir?: string | undefined;
  /**
   * GPUFLEET_STREAMS_PER_HOST: log and exec streams one host serves at once (default 8, at most sshd's
   * MaxSessions); one account holds at most half of them (docs/security.md, "Stream shares")
   */
  streamsPerHost?: number;
  /** GPUFLEET_HELD_REQUESTS: long-held requests per account and kind, e.g. `events=16,waits=200,logs=32,exec=16` (docs/security.md) */
  heldRequests?: HeldRequestLimits;
  /**
   * GPUFLEET_GPU_WATCH=off turns the GPU health watcher off; GPUFLEET_GPU_POLL_SECONDS (default 5)
   * between nvidia-smi polls, GPUFLEET_GPU_SMI_TIMEOUT_SECONDS (default 10) per call (docs/gpu-health.md)
   */
  gpuWatch?: boolean;
  gpuPollSeconds?: number;
  gpuSmiTimeoutSeconds?: number;
  /**
   * GPUFLEET_PREEMPT_GRACE: seconds a preempted interruptible pod's container has between SIGTERM and
   * SIGKILL (default 5, as on the public platform; 0 to 120) (docs/teams.md "Interruptible pods")
   */
  preemptGraceSeconds?: number;
  /**
   * GPUFLEET_SPEND_GUARD_INTERVAL_MS: how often credits and monthly budgets are looked at (pods stopped
   * at a balance of 0, budget thresholds announced; docs/teams.md); default 5000
   */
  spendGuardIntervalMs?: number;
  /** GPUFLEET_DRAIN_PARALLEL: pods a drain with a deadline moves at a time (default 1; docs/gpu-health.md "Acting on it") */
  drainParallel?: number;
  /** GPUFLEET_HOST_LOST_AFTER: unreachable this long (ms), a host is lost and its pods move (default 5 min; docs/gpu-health.md "Acting on it") */
  hostLostAfterMs?: number;
  /** GPUFLEET_OVERLAY_VERIFY: how often each host's VXLAN guard and overlay are checked again when nothing changed (default 10s; docs/networking.md) */
  overlayVerifyMs?: number;
  /**
   * GPUFLEET_OVERLAY_CIDR (default 10.200.0.0/13), GPUFLEET_INTERNAL_DOMAIN (runpod.internal),
   * GPUFLEET_GLOBAL_NETWORK_EXCLUDE=DC1,DC2, GPUFLEET_OVERLAY_MTU (derived from the hosts when unset):
   * the pods' private network across hosts (docs/networking.md)
   */
  globalNetwork?: GlobalNetworkSettings;
  /** GPUFLEET_CONSOLE_SESSION_TTL: a console session ends this long after sign-in (default 12h; docs/console.md) */
  consoleSessionTtlMs?: number;
  /**
   * GPUFLEET_CONSOLE_ALLOW_HTTP=true: console sign-in over plain HTTP to any name (a private test
   * fleet); otherwise plain HTTP signs in only on loopback names (docs/console.md, "Sessions and security")
   */
  consoleAllowHttp?: boolean;
}

/** A setting read as a duration (Go-style "5m" or seconds); anything else is refused at start. */
function durationSetting(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = parseDuration(value);
  if (ms === null || ms <= 0) throw new Error(`${name} must be a positive duration such as 5m, 90s or 300 (seconds); got ${JSON.stringify(value)}`);
  return ms;
}

/** A setting read as a positive whole number; anything else is refused at start. */
function countSetting(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new Error(`${name} must be a whole number from 1 to 9999; got ${JSON.stringify(value)}`);
  return Number(value);
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  return {
    port: Number(env.PORT ?? 8080),
    host: env.HOST ?? '127.0.0.1',
    dataDir: path.resolve(env.GPUFLEET_DATA_DIR ?? './data'),
    databaseUrl: env.GPUFLEET_DATABASE_URL || undefined,
    secretKey: parseSecretKey(env.GPUFLEET_SECRET_KEY),
    bootstrapKey: env.GPUFLEET_BOOTSTRAP_KEY || undefined,
    rateLimits: parseQuotas(env.GPUFLEET_RATE_LIMITS),
    provisioner: env.GPUFLEET_PROVISIONER !== 'off',
    reconcileIntervalMs: Number(env.GPUFLEET_RECONCILE_INTERVAL_MS ?? 2000),
    metricsIntervalMs: Number(env.GPUFLEET_METRICS_INTERVAL_MS ?? 10000),
    ...(env.GPUFLEET_PULLS_PER_HOST ? { pullsPerHost: Number(env.GPUFLEET_PULLS_PER_HOST) } : {}),
    ...(env.GPUFLEET_PULLS_PER_ACCOUNT ? { pullsPerAccount: Number(env.GPUFLEET_PULLS_PER_ACCOUNT) } : {}),
    ...(env.GPUFLEET_PULL_STALL_MS ? { pullStallMs: Number(env.GPUFLEET_PULL_STALL_MS) } : {}),
    logLevel: env.GPUFLEET_LOG_LEVEL ?? env.LOG_LEVEL ?? 'info',
    metricsToken: env.GPUFLEET_METRICS_TOKEN || undefined,
    workerUrl: env.GPUFLEET_WORKER_URL || undefined,
    workerRelay: parseWorkerRelay(env.GPUFLEET_WORKER_RELAY),
    publicUrl: env.GPUFLEET_PUBLIC_URL || undefined,
    mediaS3: mediaS3FromEnv(env),
    webhookAllowPrivate: env.GPUFLEET_WEBHOOK_ALLOW_PRIVATE === 'true',
    allowedRegistries: parseAllowedRegistries(env.GPUFLEET_ALLOWED_REGISTRIES),
    ...(env.GPUFLEET_WORKER_POLL_MS ? { workerPollMs: Number(env.GPUFLEET_WORKER_POLL_MS) } : {}),
    lbDomain: env.GPUFLEET_LB_DOMAIN?.replace(/^\.+|\.+$/g, '').toLowerCase() || undefined,
    proxyDomain: env.GPUFLEET_PROXY_DOMAIN?.replace(/^\.+|\.+$/g, '').toLowerCase() || undefined,
    proxyScheme: parseProxyScheme(env.GPUFLEET_PROXY_SCHEME),
    ...(env.GPUFLEET_EXEC_IDLE_TIMEOUT_MS ? { execIdleTimeoutMs: Number(env.GPUFLEET_EXEC_IDLE_TIMEOUT_MS) } : {}),
    consoleDir: env.GPUFLEET_CONSOLE_DIR || undefined,
    ...(env.GPUFLEET_STREAMS_PER_HOST ? { streamsPerHost: Number(env.GPUFLEET_STREAMS_PER_HOST) } : {}),
    heldRequests: parseHeldRequestLimits(env.GPUFLEET_HELD_REQUESTS),
    gpuWatch: env.GPUFLEET_GPU_WATCH !== 'off',
    ...(env.GPUFLEET_GPU_POLL_SECONDS ? { gpuPollSeconds: Number(env.GPUFLEET_GPU_POLL_SECONDS) } : {}),
    ...(env.GPUFLEET_GPU_SMI_TIMEOUT_SECONDS ? { gpuSmiTimeoutSeconds: Number(env.GPUFLEET_GPU_SMI_TIMEOUT_SECONDS) } : {}),
    preemptGraceSeconds: parsePreemptGrace(env.GPUFLEET_PREEMPT_GRACE),
    ...(env.GPUFLEET_SPEND_GUARD_INTERVAL_MS ? { spendGuardIntervalMs: Number(env.GPUFLEET_SPEND_GUARD_INTERVAL_MS) } : {}),
    ...optional('drainParallel', countSetting('GPUFLEET_DRAIN_PARALLEL', env.GPUFLEET_DRAIN_PARALLEL)),
    ...optional('hostLostAfterMs', durationSetting('GPUFLEET_HOST_LOST_AFTER', env.GPUFLEET_HOST_LOST_AFTER)),
    ...optional('overlayVerifyMs', durationSetting('GPUFLEET_OVERLAY_VERIFY', env.GPUFLEET_OVERLAY_VERIFY)),
    ...optional('consoleSessionTtlMs', durationSetting('GPUFLEET_CONSOLE_SESSION_TTL', env.GPUFLEET_CONSOLE_SESSION_TTL)),
    consoleAllowHttp: env.GPUFLEET_CONSOLE_ALLOW_HTTP === 'true',
    globalNetwork: globalNetworkSettings({
      overlayCidr: env.GPUFLEET_OVERLAY_CIDR,
      internalDomain: env.GPUFLEET_INTERNAL_DOMAIN,
      exclude: env.GPUFLEET_GLOBAL_NETWORK_EXCLUDE,
      overlayMtu: env.GPUFLEET_OVERLAY_MTU,
    }),
  };
}

const optional = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> => (value === undefined ? {} : ({ [key]: value } as Record<K, V>));

/** GPUFLEET_PROXY_SCHEME: https (the default) or http; anything else is refused. */
export function parseProxyScheme(value: string | undefined): 'https' | 'http' {
  if (!value || value === 'https') return 'https';
  if (value === 'http') return 'http';
  throw new Error(`GPUFLEET_PROXY_SCHEME must be https or http (it is ${JSON.stringify(value)})`);
}

/**
 * The proxy domain's settings, or null when none is set. Throws (the server does not start) when the
 * domain is not a DNS name, shares a registrable domain with the control plane's origin
 * (GPUFLEET_PUBLIC_URL's host when set, else the listening address), or overlaps GPUFLEET_LB_DOMAIN
 * (docs/connect.md).
 */
export function proxySettings(config: Pick<ServerConfig, 'proxyDomain' | 'proxyScheme' | 'publicUrl' | 'host' | 'lbDomain'>): ProxySettings | null {
  if (!config.proxyDomain) return null;
  const origin = config.publicUrl ? new URL(config.publicUrl).hostname : config.host;
  const problem = proxyDomainProblem(config.proxyDomain, origin);
  if (problem) throw new Error(problem);
  // every name under the proxy domain is a pod port's: load balancers' names there would be unreachable
  const lb = config.lbDomain;
  if (lb && (lb === config.proxyDomain || lb.endsWith(`.${config.proxyDomain}`) || config.proxyDomain.endsWith(`.${lb}`)))
    throw new Error(`GPUFLEET_PROXY_DOMAIN=${config.proxyDomain} and GPUFLEET_LB_DOMAIN=${lb} overlap: give each a name of its own (docs/connect.md)`);
  return { domain: config.proxyDomain, scheme: config.proxyScheme ?? 'https' };
}

/** GPUFLEET_PREEMPT_GRACE: whole seconds from 0 to 120; unset means 5; anything else is refused at start. */
export function parsePreemptGrace(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_PREEMPT_GRACE_S;
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || n > MAX_PREEMPT_GRACE_S)
    throw new Error(`GPUFLEET_PREEMPT_GRACE must be whole seconds from 0 to ${MAX_PREEMPT_GRACE_S} (it is "${value}")`);
  return n;
}

/** GPUFLEET_SECRET_KEY: exactly 32 bytes in base64 (`openssl rand -base64 32`); anything else is refused. */
export function parseSecretKey(value: string | undefined): Buffer | undefined {
  if (!value) return undefined;
  const text = value.trim();
  const key = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) || key.length !== 32)
    throw new Error(`GPUFLEET_SECRET_KEY must be 32 bytes in base64, as \`openssl rand -base64 32\` prints (it decodes to ${key.length} bytes)`);
  return key;
}

/**
 * The origin workers reach the control plane at: GPUFLEET_WORKER_URL, or the control plane's port on
 * the host as its containers see it (`host.docker.internal`), which serves when the control plane
 * runs on the host and listens where the docker bridge reaches it, or when each host forwards that
 * port to it (docs/serverless.md, "Reaching the control plane").
 */
export function workerOrigin(config: Pick<ServerConfig, 'workerUrl' | 'port'>): string {
  return (config.workerUrl ?? `http://host.docker.internal:${config.port}`).replace(/\/+$/, '');
}

/** GPUFLEET_WORKER_RELAY: on, off, or unset (empty is unset); anything else refuses to start */
function parseWorkerRelay(value: string | undefined): 'on' | 'off' | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'on' || value === 'off') return value;
  throw new Error(`GPUFLEET_WORKER_RELAY=${value} is not understood: on, off, or unset (on exactly when GPUFLEET_WORKER_URL is unset and HOST is loopback; docs/serverless.md)`);
}

const LOOPBACK = /^(127\.|localhost$|::1$|\[::1\]$)/;

/**
 * Whether each host runs a worker relay (docs/serverless.md, "Reaching the control plane"): workers
 * call `host.docker.internal:<port>` on their host, and that reaches the control plane over the
 * host's SSH connection. Never with GPUFLEET_WORKER_URL (it keeps its meaning); otherwise as
 * GPUFLEET_WORKER_RELAY says, and unset, when the control plane listens on loopback only.
 */
export function workerRelayWanted(config: Pick<ServerConfig, 'workerUrl' | 'workerRelay' | 'host'>): boolean {
  if (config.workerUrl !== undefined || config.workerRelay === 'off') return false;
  return config.workerRelay === 'on' || LOOPBACK.test(config.host);
}

/** the ports Linux hands out as ephemeral ones by default, where Docker also picks published ports (`-p 0`, `-P`) */
export const EPHEMERAL_PORTS = { first: 32768, last: 60999 } as const;

/**
 * With the relay wanted and PORT among the hosts' ephemeral ports, a tenant's pod can be given that
 * same port as a published port; Docker's DNAT rule then takes `host.docker.internal:<port>` before
 * the relay's docker-proxy, and the pod receives the workers' calls, their tokens included. Warned
 * (logged and printed at start), not refused: the range is each host's own (ip_local_port_range),
 * an operator may have narrowed it, and refusing would stop a control plane that works today.
 */
export function workerRelayPortWarning(config: Pick<ServerConfig, 'workerUrl' | 'workerRelay' | 'host' | 'port'>): string | undefined {
  if (!workerRelayWanted(config) || config.port < EPHEMERAL_PORTS.first || config.port > EPHEMERAL_PORTS.last) return undefined;
  return (
    `PORT=${config.port} lies in the hosts' ephemeral port range (${EPHEMERAL_PORTS.first}-${EPHEMERAL_PORTS.last}), where Docker also picks pods' published ports: ` +
    `a tenant's pod given port ${config.port} on a host would receive the workers' calls (and their tokens) meant for the worker relay. ` +
    'Use a PORT below 32768 (8080 by default), or set GPUFLEET_WORKER_URL (docs/serverless.md)'
  );
}

/** GPUFLEET_BOOTSTRAP_KEY shorter than this is warned about (and still created exactly as given) */
export const BOOTSTRAP_KEY_MIN_LENGTH = 32;

/** Settings that work but weaken the control plane, each as one log message (never the secret itself). */
export function configWarnings(config: ServerConfig): string[] {
  const warnings: string[] = [];
  const key = config.bootstrapKey;
  if (key !== undefined && [...key].length < BOOTSTRAP_KEY_MIN_LENGTH)
    warnings.push(
      `GPUFLEET_BOOTSTRAP_KEY is ${[...key].length} characters long, shorter than ${BOOTSTRAP_KEY_MIN_LENGTH}: ` +
        'it is used exactly as given, but a short key can be guessed; prefer a random one (openssl rand -base64 32)',
    );
  if (config.workerUrl === undefined && LOOPBACK.test(config.host) && !workerRelayWanted(config))
    warnings.push(
      `GPUFLEET_WORKER_URL is not set, so serverless workers call ${workerOrigin(config)}, but the control plane listens on ${config.host} only, ` +
        'which containers cannot reach, and GPUFLEET_WORKER_RELAY=off: set GPUFLEET_WORKER_URL to an address the hosts reach, or HOST to one the docker bridge reaches, or leave the relay on (docs/serverless.md)',
    );
  if (config.workerUrl !== undefined && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(config.workerUrl))
    warnings.push(`GPUFLEET_WORKER_URL=${config.workerUrl} is not an http(s) origin with an optional path; workers will not reach the control plane`);
  if (config.metricsToken !== undefined && [...config.metricsToken].length < BOOTSTRAP_KEY_MIN_LENGTH)
    warnings.push(`GPUFLEET_METRICS_TOKEN is shorter than ${BOOTSTRAP_KEY_MIN_LENGTH} characters: it reads only /metrics, but a short token can be guessed`);
  const relayPort = workerRelayPortWarning(config);
  if (relayPort !== undefined) warnings.push(relayPort);
  for (const r of malformedAllowedRegistries(config.allowedRegistries ?? []))
    warnings.push(`GPUFLEET_ALLOWED_REGISTRIES entry "${r}" is not host[:port] as an image names its registry (no scheme or path; IPv6 in brackets): no image matches it`);
  return warnings;
}
