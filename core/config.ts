// The interface points of mission.md, read once from the environment.
import path from 'node:path';
import { parseQuotas, type Quotas } from '../model/index.ts';

export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  bootstrapKey: string | undefined;
  rateLimits: Quotas;
  /** run the provisioner's reconcile loop in this process (off in API-only tests) */
  provisioner: boolean;
  /** milliseconds between reconcile passes (each is a host heartbeat) */
  reconcileIntervalMs: number;
  /** milliseconds between runtime metric samples per host (docker stats, nvidia-smi) */
  metricsIntervalMs: number;
  logLevel: string;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  return {
    port: Number(env.PORT ?? 8080),
    host: env.HOST ?? '127.0.0.1',
    dataDir: path.resolve(env.GPUFLEET_DATA_DIR ?? './data'),
    bootstrapKey: env.GPUFLEET_BOOTSTRAP_KEY || undefined,
    rateLimits: parseQuotas(env.GPUFLEET_RATE_LIMITS),
    provisioner: env.GPUFLEET_PROVISIONER !== 'off',
    reconcileIntervalMs: Number(env.GPUFLEET_RECONCILE_INTERVAL_MS ?? 2000),
    metricsIntervalMs: Number(env.GPUFLEET_METRICS_INTERVAL_MS ?? 10000),
    logLevel: env.GPUFLEET_LOG_LEVEL ?? env.LOG_LEVEL ?? 'info',
  };
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
  return warnings;
}
