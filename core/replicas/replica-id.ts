// A control-plane process among the replicas that share one database: a random id per start (a
// restarted process is a new replica; its old leases simply expire), with the host name for people.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function newReplicaId(): string {
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '').slice(0, 40) || 'host';
  return `${host}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
