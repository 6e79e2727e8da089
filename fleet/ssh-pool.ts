// SSH connection pool: one ssh2 connection per host, many exec channels multiplexed over it.
//
// - Lazy: the first exec dials; concurrent execs share that one dial.
// - Channels per connection are capped (sshd's MaxSessions defaults to 10); the rest queue.
// - A dropped connection (sshd restart, network, keepalive timeout) is replaced on the next exec.
//   A command whose channel never opened is retried (it cannot have run): on a fresh connection
//   when the pooled one was stale, after a short backoff when sshd refused the channel. A command
//   cut off mid-run is NOT retried (it may have run) and fails HOST_UNREACHABLE.
// - Timeouts: connectTimeoutMs covers TCP + SSH handshake; timeoutMs covers one command from its
//   channel opening (not its time in the queue). A timed-out command is rejected at once and its
//   channel closed; sshd cannot be asked to kill it (see collect()).
// - Host keys: trust on first use. A pinned fingerprint that differs from the presented key
//   refuses the connection (HOST_KEY_MISMATCH); with nothing pinned, connect() reports the key.
// - Commands run on an `exec` channel: sshd runs `<login shell> -c <command>`, non-login and
//   non-interactive, so /etc/profile and ~/.profile are not read. (Debian's bash may still source
//   ~/.bashrc for ssh sessions.) Commands therefore use absolute paths or the default PATH and
//   must not rely on start-up files. Secrets go via stdin, never in the command line.
// - The TCP socket is ours, with TCP_NODELAY: exec round trips are small writes that Nagle
//   would otherwise hold back.
// - Streams (stream(): `docker logs --follow`) live as long as a client watches, so they never take
//   one of the command channels: they get a second connection per host, with a cap of their own
//   (ssh-stream.ts), and a stream over the cap is refused at once rather than queued.
import { createHash } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import PQueue from 'p-queue';
import { Client, type ClientChannel } from 'ssh2';
import { GpufleetError, isGpufleetError } from '../model/index.ts';
import { type Conn, openExec, openForward, type PtySize, retire } from './ssh-channels.ts';
import { openStream, type SshStream, type StreamHandlers } from './ssh-stream.ts';
import { type ForwardedFrom, openRemoteForward, type RemoteForward } from './ssh-remote-forward.ts';

export type { SshStream, StreamHandlers } from './ssh-stream.ts';
export type { ForwardedFrom, RemoteForward } from './ssh-remote-forward.ts';
export { shellJoin } from './shell-join.ts';
import { shellJoin } from './shell-join.ts';

export interface SshTarget {
  hostId: string;
  address: string;
  port: number;
  user: string;
  /** OpenSSH/PEM private key, decrypted */
  privateKey: string;
  /** SHA256:<base64> pinned on first use; null while enrolling */
  pinnedFingerprint: string | null;
}

export interface ExecOptions {
  stdin?: string;
  /** per-command limit once its channel is open; default: the pool's commandTimeoutMs */
  timeoutMs?: number;
  /** resolve with the exit code instead of throwing on a non-zero exit */
  allowFailure?: boolean;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface StreamOptions {
  /** a pseudo-terminal on the host for the command (interactive exec, `docker exec -t`) */
  pty?: PtySize;
}

export interface HostKeyReport {
  /** SHA256:<base64 without padding>, as `ssh-keygen -lf` prints it */
  fingerprint: string;
  /** true when nothing was pinned: the caller should pin `fingerprint` */
  firstUse: boolean;
}

export interface SshPoolOptions {
  maxChannelsPerConnection?: number;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** stdout/stderr cap per command; beyond it the command is aborted */
  maxOutputBytes?: number;
  /** streams open at once per host (each a channel on the host's stream connection) */
  maxStreamsPerHost?: number;
  /** told each command's duration and each SSH-level failure (metrics) */
  observer?: SshObserver;
}

/** What the pool tells about its work (core/observability/telemetry implements it with prom-client). */
export interface SshObserver {
  /** a command that ran: seconds from its channel being asked for to its outcome */
  commandDone(hostId: string, seconds: number): void;
  /**
   * An SSH-level failure: no connection, a refused host key, a refused channel, a connection lost
   * mid-command, a timeout, the output cap. A command that exits non-zero is not one.
   */
  failed(hostId: string): void;
}

/**
 * The connections the pool keeps to a host, one each: commands (exec); streams (stream(): logs and
 * exec sessions, capped per host); forwards (forward(): the gateway's channels to containers);
 * background (background(): long commands the caller bounds, the provisioner's image pulls).
 */
type Lane = 'command' | 'stream' | 'forward' | 'background';

interface Entry {
  queue: PQueue;
  conn: Conn | null;
  dialing: Promise<Conn> | null;
}

/** `SHA256:<base64, no padding>` of an SSH wire-format public key. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

const OPEN_RETRIES = 6;
const ABORT_GRACE_MS = 5_000;
const tail = (s: string, n = 4096): string => (s.length > n ? `…${s.slice(-n)}` : s);

export class SshPool {
  /** each lane's connection per host: a command never waits behind a stream, a forward or a pull */
  private readonly lanes: Record<Lane, Map<string, Entry>> = { command: new Map(), stream: new Map(), forward: new Map(), background: new Map() };
  private readonly streamsOpen = new Map<string, number>();
  private readonly opts: Required<Omit<SshPoolOptions, 'observer'>>;
  private readonly observer: SshObserver | undefined;

  constructor(opts: SshPoolOptions = {}) {
    this.opts = {
      maxChannelsPerConnection: opts.maxChannelsPerConnection ?? 8,
      connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
      commandTimeoutMs: opts.commandTimeoutMs ?? 120_000,
      keepaliveIntervalMs: opts.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: opts.keepaliveCountMax ?? 3,
      maxOutputBytes: opts.maxOutputBytes ?? 32 * 1024 * 1024,
      maxStreamsPerHost: opts.maxStreamsPerHost ?? 8,
    };
    this.observer = opts.observer;
  }

  /** Connects (or reuses the connection) and reports the host key it presented. */
  async connect(target: SshTarget): Promise<HostKeyReport> {
    const { conn } = await this.connection(target);
    return { fingerprint: conn.fingerprint, firstUse: target.pinnedFingerprint === null };
  }

  /** The fingerprint the host presented on the current connection, if any. */
  presentedFingerprint(hostId: string): string | null {
    return this.lanes.command.get(hostId)?.conn?.fingerprint ?? null;
  }

  exec(target: SshTarget, command: string | string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const cmd = Array.isArray(command) ? shellJoin(command) : command;
    return new Promise<ExecResult>((resolve, reject) => {
      const failed = (e: unknown): void => {
        if (this.observer && isSshFailure(e)) this.observer.failed(target.hostId);
        reject(e as Error);
      };
      // the queue slot is held until the host has closed the channel, which can be after the
      // caller got its answer (a timed-out command keeps its session on the host for a while)
      this.entry(target.hostId, 'command').queue.add(async () => {
        const started = performance.now();
        const done = (): void => this.observer?.commandDone(target.hostId, (performance.now() - started) / 1000);
        const { conn, ch } = await this.open(target, cmd);
        await this.collect(target, conn, ch, cmd, opts, (r) => (done(), resolve(r)), (e) => (done(), failed(e)));
      }).catch(failed);
    });
  }

  /**
   * Runs a long-lived command whose output is handed over as it comes (`docker logs --follow`), on
   * the host's stream connection. Resolves once the channel is open. The command's stdin stays open
   * until close(): a command can watch it to learn that nobody listens any more (sshd cannot signal
   * it). Over the per-host cap it fails at once with UNAVAILABLE.
   */
  async stream(target: SshTarget, command: string | string[], handlers: StreamHandlers, opts: StreamOptions = {}): Promise<SshStream> {
    const cmd = Array.isArray(command) ? shellJoin(command) : command;
    const open = this.streamsOpen.get(target.hostId) ?? 0;
    if (open >= this.opts.maxStreamsPerHost)
      throw new GpufleetError('UNAVAILABLE', `host ${target.hostId} already serves ${open} streams (logs, exec sessions), the most it serves at once; try again later.`, {
        fields: { hostId: target.hostId, streams: open },
        headers: { 'retry-after': '5' },
      });
    this.streamsOpen.set(target.hostId, open + 1);
    const release = (): void => void this.streamsOpen.set(target.hostId, Math.max(0, (this.streamsOpen.get(target.hostId) ?? 1) - 1));
    try {
      const { ch } = await this.open(target, cmd, 'stream', opts.pty);
      const s = openStream(ch, handlers, opts.pty !== undefined);
      void s.done.finally(release);
      return s;
    } catch (e) {
      release();
      if (this.observer && isSshFailure(e)) this.observer.failed(target.hostId);
      throw e;
    }
  }

  /**
   * A long-lived command like stream(), but on the host's background connection and not counted in
   * the stream cap: the caller bounds how many run (the provisioner's image pulls, at most a few per
   * host, pull-scheduler.ts), so they never take a tenant's log or exec stream nor a command channel.
   * close() does not stop the command (sshd neither signals it nor hangs its terminal up while it
   * runs): one that must stop reads a line from its stdin for that (provisioner/image-pull.ts).
   */
  async background(target: SshTarget, command: string | string[], handlers: StreamHandlers, opts: StreamOptions = {}): Promise<SshStream> {
    const cmd = Array.isArray(command) ? shellJoin(command) : command;
    try {
      const { ch } = await this.open(target, cmd, 'background', opts.pty);
      return openStream(ch, handlers, opts.pty !== undefined);
    } catch (e) {
      if (this.observer && isSshFailure(e)) this.observer.failed(target.hostId);
      throw e;
    }
  }

  /**
   * A TCP connection made by the host to `address:port` (a container's address on the host's Docker
   * network), as an SSH direct-tcpip channel on the host's forwarding connection, apart from the
   * command and stream ones: nothing is published on the host for it. The load-balancing gateway
   * reaches its workers this way (docs/gateway.md). A stale pooled connection is redialled once; a
   * refused channel (nothing listens there, the container is gone) fails BAD_GATEWAY.
   */
  async forward(target: SshTarget, address: string, port: number): Promise<ClientChannel> {
    let { conn, reused } = await this.connection(target, 'forward');
    for (;;) {
      try {
        return await openForward(conn, address, port);
      } catch (err) {
        if (!conn.alive && reused) {
          ({ conn, reused } = await this.connection(target, 'forward'));
          continue;
        }
        if (this.observer && !conn.alive) this.observer.failed(target.hostId);
        throw new GpufleetError(
          conn.alive ? 'BAD_GATEWAY' : 'HOST_UNREACHABLE',
          `host ${target.hostId}: no forwarded connection to ${address}:${port}: ${(err as Error).message}`,
          { cause: err, fields: { hostId: target.hostId, address, port } },
        );
      }
    }
  }

  /**
   * An SSH remote forward on a connection of its own, not pooled: sshd listens on the host's
   * 127.0.0.1 and each connection made there reaches `onConnection` (ssh-remote-forward.ts). The
   * caller owns it: it closes it, and starts another when `closed` settles.
   */
  async remoteForward(target: SshTarget, onConnection: (channel: ClientChannel, from: ForwardedFrom) => void): Promise<RemoteForward> {
    const identity = `${target.user}@${target.address}:${target.port}#remote-forward`;
    try {
      return await openRemoteForward(await this.dial(target, identity), onConnection);
    } catch (e) {
      if (this.observer && isSshFailure(e)) this.observer.failed(target.hostId);
      throw e;
    }
  }

  /** Streams open now to a host (stream()); 0 once every one has closed. */
  openStreams(hostId: string): number {
    return this.streamsOpen.get(hostId) ?? 0;
  }

  /** Closes the host's connection; a later exec dials again. */
  async close(hostId: string): Promise<void> {
    await Promise.all(
      Object.values(this.lanes).map(async (lane) => {
        const e = lane.get(hostId);
        if (!e) return;
        await e.dialing?.catch(() => undefined);
        const conn = e.conn;
        e.conn = null;
        if (conn) await retire(conn);
      }),
    );
  }

  async closeAll(): Promise<void> {
    const hosts = new Set(Object.values(this.lanes).flatMap((lane) => [...lane.keys()]));
    await Promise.all([...hosts].map((id) => this.close(id)));
  }

  private entry(hostId: string, lane: Lane): Entry {
    const entries = this.lanes[lane];
    let e = entries.get(hostId);
    if (!e) {
      e = { queue: new PQueue({ concurrency: this.opts.maxChannelsPerConnection }), conn: null, dialing: null };
      entries.set(hostId, e);
    }
    return e;
  }

  private async connection(target: SshTarget, lane: Lane = 'command'): Promise<{ conn: Conn; reused: boolean }> {
    const e = this.entry(target.hostId, lane);
    const identity = `${target.user}@${target.address}:${target.port}#${createHash('sha256').update(target.privateKey).digest('hex')}`;
    const usable = (c: Conn | null): c is Conn =>
      !!c && c.alive && c.identity === identity &&
      (target.pinnedFingerprint === null || target.pinnedFingerprint === c.fingerprint);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (usable(e.conn)) return { conn: e.conn, reused: true };
      if (!e.dialing) {
        const old = e.conn;
        e.conn = null;
        if (old) void retire(old); // dead, re-pinned or re-addressed
        const dialing = this.dial(target, identity).then((c) => (e.conn = c));
        e.dialing = dialing;
        const done = (): void => void (e.dialing = null);
        dialing.then(done, done);
        return { conn: await dialing, reused: false };
      }
      await e.dialing; // someone else is dialing: share it, then re-check it fits our target
    }
    throw new GpufleetError('HOST_UNREACHABLE', `host ${target.hostId}: connection kept being replaced`);
  }

  private dial(t: SshTarget, identity: string): Promise<Conn> {
    const where = `host ${t.hostId} (${t.user}@${t.address}:${t.port})`;
    const fields = { hostId: t.hostId, address: t.address, port: t.port };
    return new Promise<Conn>((resolve, reject) => {
      const client = new Client();
      let markClosed: () => void = () => undefined;
      const conn: Conn = { client, identity, fingerprint: '', alive: false, closed: new Promise((r) => (markClosed = r)) };
      let mismatch: GpufleetError | null = null;
      let settled = false;
      const fail = (e: GpufleetError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client.destroy();
        reject(e);
      };
      const unreachable = (msg: string, cause?: unknown): GpufleetError =>
        new GpufleetError('HOST_UNREACHABLE', `${where}: ${msg}`, { cause, fields });
      const timer = setTimeout(() => fail(unreachable(`no SSH session within ${this.opts.connectTimeoutMs} ms`)), this.opts.connectTimeoutMs);
      client.on('ready', () => {
        settled = true;
        clearTimeout(timer);
        conn.alive = true;
        resolve(conn);
      });
      // after 'ready' errors only mark the connection dead; the next exec dials again
      client.on('error', (err: Error) => {
        conn.alive = false;
        fail(mismatch ?? unreachable(err.message, err));
      });
      client.on('end', () => (conn.alive = false));
      client.on('close', () => {
        conn.alive = false;
        markClosed();
        fail(mismatch ?? unreachable('connection closed during the SSH handshake'));
      });
      const sock = netConnect({ host: t.address, port: t.port });
      sock.setNoDelay(true);
      try {
        client.connect({
          sock,
          username: t.user,
          privateKey: t.privateKey,
          keepaliveInterval: this.opts.keepaliveIntervalMs,
          keepaliveCountMax: this.opts.keepaliveCountMax,
          readyTimeout: this.opts.connectTimeoutMs + 1_000, // our timer fires first
          hostVerifier: (key: Buffer): boolean => {
            conn.fingerprint = hostKeyFingerprint(key);
            if (t.pinnedFingerprint === null || t.pinnedFingerprint === conn.fingerprint) return true;
            mismatch = new GpufleetError(
              'HOST_KEY_MISMATCH',
              `${where} presented host key ${conn.fingerprint} but ${t.pinnedFingerprint} is pinned; refusing to connect (accept the new key to re-pin it)`,
              { fields: { ...fields, expected: t.pinnedFingerprint, presented: conn.fingerprint } },
            );
            return false;
          },
        });
      } catch (err) {
        sock.destroy();
        fail(unreachable(`cannot start SSH: ${(err as Error).message}`, err));
      }
    });
  }

  private async open(t: SshTarget, cmd: string, lane: Lane = 'command', pty?: StreamOptions['pty']): Promise<{ conn: Conn; ch: ClientChannel }> {
    let { conn, reused } = await this.connection(t, lane);
    for (let attempt = 1; ; attempt++) {
      try {
        return { conn, ch: await openExec(conn, cmd, pty) };
      } catch (err) {
        // the channel never opened, so the command did not run: retrying is safe
        if (conn.alive) {
          // sshd refuses sessions beyond MaxSessions and frees one only after reaping a closed
          // channel, so a burst of short commands can briefly hit the limit
          if (attempt > OPEN_RETRIES) throw this.commandError(t, cmd, null, '', '', `exec channel refused: ${(err as Error).message}`, err);
          await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
        } else if (reused && attempt === 1) {
          ({ conn, reused } = await this.connection(t, lane)); // stale pooled connection: redial once
        } else {
          throw new GpufleetError('HOST_UNREACHABLE', `host ${t.hostId}: connection lost before the command started`, {
            cause: err,
            fields: { hostId: t.hostId, address: t.address, port: t.port },
          });
        }
      }
    }
  }

  /** Settles the caller as soon as the outcome is known; resolves when the queue slot is free. */
  private collect(
    t: SshTarget, conn: Conn, ch: ClientChannel, cmd: string, opts: ExecOptions,
    resolve: (r: ExecResult) => void, reject: (e: GpufleetError) => void,
  ): Promise<void> {
    const timeoutMs = opts.timeoutMs ?? this.opts.commandTimeoutMs;
    return new Promise<void>((release) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const text = (b: Buffer[]): string => Buffer.concat(b).toString('utf8');
      let bytes = 0;
      let aborted = false;
      // OpenSSH does not deliver `signal` requests here ("session signalling requires privilege
      // separation"), so on abort we close the channel: the command gets EOF/SIGPIPE, and a
      // command that never reads or writes runs on until it ends by itself.
      const abort = (why: string): void => {
        if (aborted) return;
        aborted = true;
        reject(this.commandError(t, cmd, null, text(out), text(err), why));
        ch.close();
        setTimeout(release, ABORT_GRACE_MS).unref();
      };
      const take = (into: Buffer[]) => (d: Buffer): void => {
        bytes += d.length;
        if (bytes > this.opts.maxOutputBytes) abort(`output exceeded ${this.opts.maxOutputBytes} bytes`);
        else into.push(d);
      };
      ch.on('data', take(out));
      ch.stderr.on('data', take(err));
      const timer = setTimeout(() => abort(`timed out after ${timeoutMs} ms`), timeoutMs);
      ch.on('close', (code: number | null | undefined, signal?: string) => {
        clearTimeout(timer);
        release();
        if (aborted) return;
        setImmediate(() => {
          // (after pending stderr 'data' events)
          const stdout = text(out);
          const stderr = text(err);
          if (typeof code === 'number') {
            if (code !== 0 && !opts.allowFailure) reject(this.commandError(t, cmd, code, stdout, stderr));
            else resolve({ stdout, stderr, code });
          } else if (!conn.alive) {
            reject(new GpufleetError('HOST_UNREACHABLE', `host ${t.hostId}: connection lost while running a command (it may have run)`, {
              fields: { hostId: t.hostId, address: t.address, port: t.port, command: cmd },
            }));
          } else {
            reject(this.commandError(t, cmd, null, stdout, stderr, signal ? `killed by ${signal}` : 'ended without an exit status'));
          }
        });
      });
      ch.end(opts.stdin); // EOF on stdin either way, so readers do not hang
    });
  }

  private commandError(t: SshTarget, cmd: string, code: number | null, stdout: string, stderr: string, why?: string, cause?: unknown): GpufleetError {
    const short = cmd.length > 200 ? `${cmd.slice(0, 200)}…` : cmd;
    const reason = why ?? `exited ${code}`;
    const lastErr = stderr.trim().split('\n').pop() ?? '';
    return new GpufleetError('SSH_COMMAND_FAILED', `host ${t.hostId}: \`${short}\` ${reason}${lastErr ? `: ${lastErr}` : ''}`, {
      cause,
      fields: { hostId: t.hostId, command: cmd, code, stderr: tail(stderr), stdout: tail(stdout), ...(why ? { reason: why } : {}) },
    });
  }
}

/** A failure of SSH itself, not of the command: see SshObserver.failed. */
function isSshFailure(e: unknown): boolean {
  if (!isGpufleetError(e)) return false;
  if (e.code === 'HOST_UNREACHABLE' || e.code === 'HOST_KEY_MISMATCH') return true;
  // a command with an exit status ran and answered; one without was cut off, refused or timed out
  return e.code === 'SSH_COMMAND_FAILED' && e.fields.code === null;
}
