// The door between the worker relay on the hosts (provisioner/worker-relay.ts: an SSH remote forward
// per host) and the HTTP side that answers what comes through it (api/jobs/worker-relay-server.ts):
// only the worker protocol routes, for workers of that host (docs/serverless.md, "Reaching the
// control plane"). Until the HTTP side opens it, a connection that arrives is closed at once.
import type { Duplex } from 'node:stream';

/** serves one connection that came through `hostId`'s relay */
export type RelayConnectionHandler = (hostId: string, connection: Duplex) => void;

export class WorkerRelayDoor {
  private handler: RelayConnectionHandler | null = null;
  private readonly problems = new Map<string, string>();

  /** the HTTP side: serves each relayed connection (null: none served any more) */
  open(handler: RelayConnectionHandler | null): void {
    this.handler = handler;
  }

  get isOpen(): boolean {
    return this.handler !== null;
  }

  /** the relay of a host says how it is: null once it serves, why not while it is down */
  report(hostId: string, problem: string | null): void {
    if (problem === null) this.problems.delete(hostId);
    else this.problems.set(hostId, problem);
  }

  /** why a host's relay is down (shown in its workers' reasons), or null: up, starting, or none */
  problem(hostId: string): string | null {
    return this.problems.get(hostId) ?? null;
  }

  /** a connection that came through a host's relay */
  accept(hostId: string, connection: Duplex): void {
    if (this.handler) this.handler(hostId, connection);
    else connection.destroy();
  }
}
