// Default logger: one line per message on stderr, debug lines only when asked for with the same
// variables runpod-python reads (RUNPOD_LOG_LEVEL / RUNPOD_DEBUG_LEVEL).
import type { WorkerLogger } from './types.ts';

export function defaultLogger(env: Record<string, string | undefined>): WorkerLogger {
  const level = (env.RUNPOD_LOG_LEVEL ?? env.RUNPOD_DEBUG_LEVEL ?? 'INFO').toUpperCase();
  const debug = level === 'DEBUG' || level === 'TRACE' || level === 'NOTSET';
  const line = (lvl: string, message: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${lvl} worker | ${message}\n`);
  };
  return {
    debug: (m) => (debug ? line('DEBUG', m) : undefined),
    info: (m) => (level === 'ERROR' ? undefined : line('INFO', m)),
    error: (m) => line('ERROR', m),
  };
}

export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (cause: ${err.cause.message})` : '';
  return `${err.name}: ${err.message}${cause}`;
}
