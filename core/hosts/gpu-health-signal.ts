// The GPU-failure signal (docs/gpu-health.md, "The signal"): a typed in-process port that tells
// whoever acts on GPU health (moving pods off a failed GPU, core/hosts' consumers) each change the
// GPU watcher (provisioner/gpu-watch) or a diagnostic/clear (GpuHealthService) committed. It is
// published after the store commit that recorded the change, by the replica that made it (with
// PostgreSQL replicas: the one that holds the host's reconcile lease and watches it), once per change.
// `live: false` marks an incident read from the kernel log as it was before the watcher first read
// the host (at enrolment, or the first watch after an upgrade): recorded and shown, never a reason to
// move pods. The GPU's health in the store is the truth; a consumer that missed a signal (a restart)
// finds FAILURE GPUs there.
import type { GpuHealth, GpuIncident } from '../../model/index.ts';

export interface GpuHealthSignalEvent {
  hostId: string;
  gpuIndex: number;
  gpuUuid: string;
  /** the GPU's health after the change */
  health: GpuHealth;
  /** its health before */
  previousHealth: GpuHealth;
  /** the incident opened or repeated; null when the GPU returned to service (diagnostic passed, operator cleared) */
  incident: GpuIncident | null;
  /** false for incidents from the kernel log before the watcher first read the host: never act on them */
  live: boolean;
  /** when it was committed (RFC 3339) */
  at: string;
}

export type GpuHealthListener = (e: GpuHealthSignalEvent) => void | Promise<void>;

export class GpuHealthSignal {
  private readonly listeners = new Set<GpuHealthListener>();

  /** Hears every committed GPU health change from now on; answers the unsubscribe. */
  subscribe(listener: GpuHealthListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Tells every listener (a listener that throws or rejects is logged by `onError`, never the publisher's problem). */
  publish(e: GpuHealthSignalEvent, onError: (err: unknown) => void = () => undefined): void {
    for (const l of this.listeners) {
      try {
        void Promise.resolve(l(e)).catch(onError);
      } catch (err) {
        onError(err);
      }
    }
  }
}
