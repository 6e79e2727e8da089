// The door between the worker relay on the hosts (provisioner/worker-relay.ts: an SSH remote forward
// per host) and the HTTP side that answers what comes through it (api/jobs/worker-relay-server.ts):
// only the worker protocol routes, for workers of that host (docs/serverless.md, "Reaching the
// control plane"). Until the HTTP side opens it, a connection that arrives is closed at once.
import type { Duplex } from 'node:stream';

/** serves one connection that came through `hostId`'s relay */
export type RelayConnectionHandler = (hostId: string, connection: Duplex) => void;

export class WorkerRelayDoor {
  private handler: RelayConnectionHandler | null = null;

  /** the HTTP side: serves each relayed connection (null: none served any more) */
  open(handler: RelayConnectionHandler | null): void {
    this.handler = handler;
  }

  get isOpen(): boolean {
    return this.handler !== null;
  }

  /** a connection that came through a host's relay */
  accept(hostId: string, connection: Duplex): void {
    if (this.handler) this.handler(hostId, connection);
    else connection.destroy();
  }
}
