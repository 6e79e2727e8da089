// One host's worker relay (docs/serverless.md, "Reaching the control plane"). On an SSH connection of
// its own: a remote forward (sshd listens on the host's 127.0.0.1; each connection made there comes to
// the control plane as a channel, handed to the worker-only HTTP side through services.workerRelay),
// and on the same connection Docker's TCP proxy listening on the bridge address containers reach as
// `host.docker.internal`, at the control plane's port, forwarding to that loopback port
// (fleet/worker-relay-script.ts). The proxy ends with the connection. When either ends (the host
// rebooted, sshd restarted, the network dropped, the proxy could not bind), all of it is started
// again after a backoff, so a host that comes back has its relay back within seconds.
import type { Logger } from 'pino';
import type { Services } from '../core/index.ts';
import { type RemoteForward, workerRelayScript } from '../fleet/index.ts';

const RESTART_MS = [500, 1_000, 2_000, 5_000, 10_000];
/** how long the proxy may take to report that it listens */
const READY_MS = 10_000;
/** a heartbeat byte on the script's stdin this often (it stops the proxy after RELAY_HEARTBEAT_TIMEOUT_S without one) */
const HEARTBEAT_MS = 5_000;

export type RelayState =
  | { state: 'starting' }
  | { state: 'ready'; gateway: string; listenPort: number; forwardPort: number }
  | { state: 'failed'; reason: string };

export class HostWorkerRelay {
  private forward: RemoteForward | null = null;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  /** the last reason logged: the same one again is not logged again */
  private lastProblem: string | null = null;
  /** what the relay is doing now (the loop's log, tests) */
  status: RelayState = { state: 'starting' };
  /** relays set up, for tests and logs */
  sessions = 0;

  constructor(
    private readonly s: Services,
    readonly hostId: string,
    private readonly logger?: Logger,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.status = { state: 'starting' };
    void this.open().catch((err: unknown) => this.failed((err as Error).message ?? String(err)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.s.workerRelay.report(this.hostId, null);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const f = this.forward;
    this.forward = null;
    await f?.close();
  }

  private async open(): Promise<void> {
    const host = await this.s.store.get('hosts', this.hostId);
    if (!host || this.stopped) return;
    const forward = await this.s.sshPool.remoteForward(this.s.fleet.target(host), (channel) => this.s.workerRelay.accept(this.hostId, channel));
    if (this.stopped) return void (await forward.close());
    this.forward = forward;
    try {
      await this.serve(forward);
    } finally {
      await forward.close();
      if (this.forward === forward) this.forward = null;
    }
    if (!this.stopped) this.failed('the relay\'s SSH connection or its proxy ended');
  }

  /** runs the proxy on the forward's connection until either ends; throws when it never listened */
  private async serve(forward: RemoteForward): Promise<void> {
    const listenPort = this.s.config.port;
    let gateway = '';
    let lines = '';
    let settle: (outcome: string | null) => void = () => undefined;
    const ready = new Promise<string | null>((r) => (settle = r));
    const timer = setTimeout(() => settle(`docker-proxy did not report within ${READY_MS / 1000} s`), READY_MS);
    const stream = await forward.exec(workerRelayScript({ listenPort, forwardPort: forward.port }), {
      stdout: (chunk) => {
        lines += chunk.toString('utf8');
        for (;;) {
          const nl = lines.indexOf('\n');
          if (nl < 0) break;
          const line = lines.slice(0, nl).trim();
          lines = lines.slice(nl + 1);
          if (line.startsWith('gateway ')) gateway = line.slice('gateway '.length);
          else if (line === '0') settle(null);
          else if (line.startsWith('error ')) settle(line.slice('error '.length));
          else if (line.startsWith('exit ')) settle(`docker-proxy on ${gateway || 'the bridge'}:${listenPort} ended (${line})`);
          else if (line !== '1' && line !== '') settle(`docker-proxy on ${gateway || 'the bridge'}:${listenPort}: ${line}`);
        }
      },
      stderr: () => undefined,
    });
    // the host's side stops the proxy when these stop (a half-open connection it cannot see)
    const heartbeat = setInterval(() => stream.write(Buffer.from('\n')), HEARTBEAT_MS);
    heartbeat.unref();
    // docker-proxy reports a failure as `1` and the error without a newline, then exits
    void stream.done.then(() => {
      clearInterval(heartbeat);
      settle(`the relay session ended${lines.trim() ? `: ${lines.trim()}` : ''}`);
    });
    const problem = await ready;
    clearTimeout(timer);
    if (problem !== null) {
      stream.close();
      throw new Error(problem);
    }
    this.failures = 0;
    this.lastProblem = null;
    this.sessions++;
    this.status = { state: 'ready', gateway, listenPort, forwardPort: forward.port };
    this.s.workerRelay.report(this.hostId, null);
    this.logger?.info({ hostId: this.hostId, gateway, port: listenPort, forwardPort: forward.port }, 'worker relay ready: workers on this host reach the control plane at host.docker.internal');
    // whichever ends first (the connection, or the proxy) ends both, and the relay starts again
    await Promise.race([forward.closed, stream.done]);
    stream.close();
  }

  private failed(reason: string): void {
    if (this.stopped) return;
    const again = this.lastProblem === reason;
    this.lastProblem = reason;
    this.status = { state: 'failed', reason };
    this.s.workerRelay.report(this.hostId, reason);
    const wait = RESTART_MS[Math.min(this.failures++, RESTART_MS.length - 1)]!;
    if (!again) this.logger?.warn({ hostId: this.hostId, reason, retryInMs: wait }, 'worker relay down: workers on this host cannot reach the control plane until it is back');
    this.restartTimer = setTimeout(() => this.start(), wait);
    this.restartTimer.unref();
  }
}
