// How the gateway opens a connection to a worker's port; undici pools these connections per worker
// and port (worker-dispatcher.ts). The default goes through the host's SSH connection: a direct-tcpip
// channel from the host to the container's address on the account's Docker network, so a
// load-balancing worker publishes nothing and nobody reaches it around the gateway (docs/gateway.md).
// A plain TCP connector serves a network only the control plane reaches, and the benchmark.
import { connect as netConnect } from 'node:net';
import { Duplex } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import type { SshPool, SshTarget } from '../fleet/index.ts';
import type { HostService } from '../core/index.ts';
import { shellJoin } from '../fleet/index.ts';
import { GpufleetError } from '../model/index.ts';
import type { Store } from '../store/index.ts';
import type { LbWorker } from './worker-table.ts';

export interface WorkerConnector {
  /** a connected byte stream to the worker's (or pod's) `port` */
  connect(w: ContainerRef, port: number): Promise<Duplex>;
  /** the worker left: drop what was cached for it */
  forget(w: LbWorker): void;
}

const CONNECT_TIMEOUT_MS = 5_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string, onLate: (v: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new GpufleetError('BAD_GATEWAY', `${what}: no connection within ${ms} ms`));
    }, ms);
    p.then(
      (v) => (late ? onLate(v) : (clearTimeout(timer), resolve(v))),
      (e: unknown) => (late ? undefined : (clearTimeout(timer), reject(e as Error))),
    );
  });
}

/** A container the gateway reaches: a load balancer's worker, or a pod (pod-ports.ts). */
export type ContainerRef = Pick<LbWorker, 'id' | 'hostId' | 'containerId'>;

/** Where a worker is from its host: the host's SSH target and the container's address there. */
export type SshRoute = (w: ContainerRef) => Promise<{ target: SshTarget; address: string }>;

/**
 * The container's address on its (only) network, asked of Docker on the host over SSH once per
 * container: the provisioner puts each pod on its account's network and nothing else.
 */
export function containerRoute(store: Store, fleet: HostService, pool: SshPool): SshRoute {
  const addresses = new Map<string, Promise<string>>();
  return async (w) => {
    const host = await store.get('hosts', w.hostId);
    if (!host) throw new GpufleetError('BAD_GATEWAY', `worker ${w.id}: its host ${w.hostId} was removed`);
    const target = fleet.target(host);
    let address = addresses.get(w.containerId);
    if (!address) {
      const format = '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}';
      address = pool.exec(target, shellJoin(['docker', 'inspect', '--format', format, w.containerId]), { timeoutMs: 10_000 }).then((r) => {
        const ip = r.stdout.trim().split(/\s+/).find((s) => /^[0-9a-f.:]+$/i.test(s));
        if (!ip) throw new GpufleetError('BAD_GATEWAY', `worker ${w.id}: its container has no network address (is it running?)`);
        return ip;
      });
      addresses.set(w.containerId, address);
      address.catch(() => addresses.delete(w.containerId));
    }
    return { target, address: await address };
  };
}

export class SshConnector implements WorkerConnector {
  constructor(
    private readonly pool: SshPool,
    private readonly route: SshRoute,
  ) {}

  async connect(w: ContainerRef, port: number): Promise<Duplex> {
    const { target, address } = await this.route(w);
    const ch = await withTimeout(this.pool.forward(target, address, port), CONNECT_TIMEOUT_MS, `worker ${w.id} (${address}:${port} on host ${w.hostId})`, (c) => c.destroy());
    return new ChannelSocket(ch);
  }

  forget(): void {
    // addresses are cached by container id, which a new container never reuses
  }
}

/**
 * An SSH channel as the socket undici expects. ssh2's Channel.destroy() only starts the channel's
 * close handshake (it neither marks the stream destroyed nor errors it), so a connection undici gives
 * up on mid-request (a body over the limit, a timeout) would stay "open" in its pool with requests
 * queued behind it; this stream ends at once and closes the channel behind it.
 */
class ChannelSocket extends Duplex {
  constructor(private readonly ch: ClientChannel) {
    super({ allowHalfOpen: false });
    ch.on('data', (d: Buffer) => {
      if (!this.push(d)) ch.pause();
    });
    ch.on('end', () => this.push(null));
    ch.on('close', () => this.destroy());
    ch.on('error', (e: Error) => this.destroy(e));
  }

  override _read(): void {
    this.ch.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.ch.write(chunk, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.ch.end();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.ch.destroy(); // ssh2: end and send CHANNEL_CLOSE
    cb(err);
  }
}

/** Plain TCP to an address the control plane reaches (a private network; the benchmark). */
export class TcpConnector implements WorkerConnector {
  constructor(private readonly addressOf: (w: ContainerRef) => Promise<string> | string) {}

  async connect(w: ContainerRef, port: number): Promise<Duplex> {
    const host = await this.addressOf(w);
    const sock = netConnect({ host, port });
    sock.setNoDelay(true);
    const connected = new Promise<Duplex>((resolve, reject) => {
      sock.once('connect', () => resolve(sock));
      sock.once('error', (e) => reject(new GpufleetError('BAD_GATEWAY', `worker ${w.id} (${host}:${port}): ${e.message}`, { cause: e })));
    });
    return withTimeout(connected, CONNECT_TIMEOUT_MS, `worker ${w.id} (${host}:${port})`, (s) => s.destroy());
  }

  forget(): void {}
}
