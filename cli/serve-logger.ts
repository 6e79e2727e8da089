// The `serve` logger: pino-pretty on a terminal (a transport, in its own thread), JSON lines
// otherwise (a log shipper, `docker logs`, systemd). The redaction is the same either way: pino
// censors before a line reaches the transport (docs/auth.md, "Logs").
import pino, { type Logger } from 'pino';
import { LOG_REDACT } from '../api/index.ts';

export function serveLogger(level: string, terminal = process.stdout.isTTY === true): Logger {
  const options = { level, redact: LOG_REDACT };
  if (!terminal) return pino(options);
  return pino({
    ...options,
    transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
  });
}
