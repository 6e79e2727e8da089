// Does a pod's published 22/tcp answer as an SSH server? The pod view shows `ssh.direct` only then
// (docs/connect.md, "SSH"). Checked from the host, over its SSH connection: a direct-tcpip channel to
// 127.0.0.1:<published port> (where Docker publishes it), and the server's first bytes must be an SSH
// greeting (`SSH-2.0-…`). Beside the reconcile pass, never in it; again every few seconds until it
// answers (sshd may start after the container), then no more for that container. The answer is kept
// in `observed.sshAnswers` and carried over while the container is the same.
import type { Services } from '../core/index.ts';
import type { HostRecord, PodRecord } from '../model/index.ts';

const PROBE_TIMEOUT_MS = 3_000;

export class SshProbes {
  private readonly lastTry = new Map<string, number>();
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly s: Services,
    private readonly everyMs = 5_000,
  ) {}

  /** `pod` as the pass read it, its running container's id and the host port its 22/tcp is published on */
  check(host: HostRecord, pod: PodRecord, containerId: string, hostPort: number | undefined): void {
    const known = pod.observed?.containerId === containerId ? pod.observed.sshAnswers : undefined;
    if (!hostPort || !pod.ports.includes('22/tcp') || known === true) {
      this.lastTry.delete(pod.id);
      return;
    }
    const now = Date.now();
    if (this.inFlight.has(pod.id) || now - (this.lastTry.get(pod.id) ?? 0) < this.everyMs) return;
    this.lastTry.set(pod.id, now);
    this.inFlight.add(pod.id);
    void this.greets(host, hostPort)
      .then((answers) => (answers === known ? undefined : this.record(pod.id, containerId, answers)))
      .catch(() => undefined) // the next pass tries again
      .finally(() => this.inFlight.delete(pod.id));
  }

  private async greets(host: HostRecord, port: number): Promise<boolean> {
    const channel = await this.s.sshPool.forward(this.s.fleet.target(host), '127.0.0.1', port).catch(() => null);
    if (!channel) return false;
    return new Promise<boolean>((resolve) => {
      let seen = '';
      const done = (v: boolean): void => {
        clearTimeout(timer);
        channel.destroy();
        resolve(v);
      };
      const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
      channel.on('data', (d: Buffer) => {
        seen += d.toString('latin1');
        if (seen.length >= 4) done(seen.startsWith('SSH-'));
      });
      channel.on('close', () => done(false));
      channel.on('error', () => done(false));
    });
  }

  private async record(podId: string, containerId: string, sshAnswers: boolean): Promise<void> {
    await this.s.store.transact(async (tx) => {
      const p = await tx.get('pods', podId);
      if (p?.status === 'RUNNING' && p.observed?.containerId === containerId) tx.put('pods', { ...p, observed: { ...p.observed, sshAnswers } });
    });
  }
}
