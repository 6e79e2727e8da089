// One undici Agent for every worker: a worker's origin is `http://<worker id>:<port>`, and the Agent's
// `connect` turns that into a connection from the WorkerConnector (an SSH channel by default), so
// undici keeps its pool of kept-alive connections per worker and port, over SSH as over TCP.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Agent, type buildConnector } from 'undici';
import { GpufleetError } from '../model/index.ts';
import type { WorkerConnector } from './connectors.ts';
import type { LbWorker } from './worker-table.ts';

export function workerOrigin(w: LbWorker, port = w.port): string {
  return `http://${w.id}:${port}`;
}

/**
 * The port of an origin as undici hands it over: the URL parser drops a scheme's default port, so
 * `http://<id>:80` arrives with port '' (was read as port 0, and a worker on the documented default
 * port 80 was never reached).
 */
export function originPort(port: string | number | null | undefined, protocol: string | null | undefined): number {
  if (port !== undefined && port !== null && port !== '') return Number(port);
  return protocol === 'https:' ? 443 : 80;
}

export function workerDispatcher(connector: WorkerConnector, workerOf: (id: string) => LbWorker | undefined): Agent {
  return streamDispatcher(async (id, port) => {
    const w = workerOf(id);
    if (!w) throw new GpufleetError('BAD_GATEWAY', `worker ${id} is no longer in service`);
    return connector.connect(w, port);
  });
}

/**
 * An undici Agent whose connections to `http://<name>:<port>` are the streams `open` gives (an SSH
 * channel): the load balancers' workers above, pods' HTTP ports (pod-ports.ts).
 */
export function streamDispatcher(open: (name: string, port: number) => Promise<Duplex>): Agent {
  const connect: buildConnector.connector = (opts, callback) => {
    open(opts.hostname, originPort(opts.port, opts.protocol)).then(
      // a Duplex, not a net.Socket: undici uses only what streams have (read, write, cork, destroy)
      (stream) => callback(null, stream as Socket),
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );
  };
  return new Agent({
    connect,
    // kept-alive connections are closed before a worker's own idle timeout closes them (Node's 5 s)
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 30_000,
  });
}
