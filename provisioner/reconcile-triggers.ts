// Which store commits wake a host's reconcile pass at once (the interval's pass comes anyway). Host
// records never do: heartbeats write them, and a down host would spin. A pod wakes the host it is
// on when something a pass acts on changed, and not for:
// - the provisioner's own writes (what a pass observed, pod-status.ts): they change no intent, and a
//   pass right after would only observe again what the one that wrote them just did;
// - a serverless worker's own fields (`worker`: its readiness, written at its first ping): a pass
//   then would observe the host while the new worker boots and takes its first job.
import { createHash } from 'node:crypto';
import { PROVISIONER_ACTOR, type PodRecord } from '../model/index.ts';
import type { CommitInfo, StoreChange } from '../store/index.ts';

/** What of a pod a pass acts on: all of it but the worker's own fields, hashed (kept per pod). */
function passInput(pod: PodRecord): string {
  return createHash('sha1').update(JSON.stringify({ ...pod, worker: undefined })).digest('base64');
}

export class ReconcileTriggers {
  /** pod id → passInput of the pod as last committed */
  private readonly heard = new Map<string, string>();

  /**
   * The hosts a commit wakes, and the ids of pods it changed without carrying them (the host is read).
   * The commit carries each pod as written: its host is known without a read.
   */
  wake(changes: readonly StoreChange[], commit: CommitInfo): { hosts: Set<string>; podsToRead: string[] } {
    const hosts = new Set<string>();
    const podsToRead: string[] = [];
    for (const c of changes) {
      if (c.collection !== 'pods') continue;
      if (c.deleted) {
        this.heard.delete(c.id);
      } else if (!c.record) {
        this.heard.delete(c.id);
        if (commit.actor !== PROVISIONER_ACTOR) podsToRead.push(c.id);
      } else {
        const input = passInput(c.record);
        const changed = this.heard.get(c.id) !== input;
        this.heard.set(c.id, input);
        if (changed && commit.actor !== PROVISIONER_ACTOR && c.record.hostId) hosts.add(c.record.hostId);
      }
    }
    return { hosts, podsToRead };
  }
}
