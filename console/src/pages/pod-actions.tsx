// A pod's actions as buttons named Start, Stop, Restart and Terminate (the ones the API lists in
// the pod's `actions`), each asking first; none for a key that may not change anything.
import type { PodAction, PodView } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { useConfirm } from '../ui/confirm.tsx';

export const ACTIONS: { action: PodAction; label: string; detail: string }[] = [
  { action: 'start', label: 'Start', detail: 'The pod starts again on its host, with its volume.' },
  { action: 'stop', label: 'Stop', detail: 'The container stops; its volume is kept and billed.' },
  { action: 'restart', label: 'Restart', detail: 'The container restarts.' },
  { action: 'terminate', label: 'Terminate', detail: 'The pod and its volume disk are removed. This cannot be undone.' },
];

export function PodActions({ pod, onDone }: { pod: PodView; onDone: (p: PodView | undefined) => void }) {
  const api = useApi();
  const confirm = useConfirm();
  if (!api.write) return null;
  const allowed = new Set(Array.isArray(pod.actions) ? (pod.actions as string[]) : []);
  return (
    <span class="actions">
      {ACTIONS.filter((a) => allowed.has(a.action)).map((a) => (
        <button
          type="button"
          class={a.action === 'terminate' ? 'danger small' : 'small'}
          onClick={() =>
            confirm({
              label: a.label,
              question: `${a.label} pod ${pod.name}?`,
              detail: a.detail,
              danger: a.action === 'terminate',
              run: async () => onDone(await api.pods.act(pod.id, a.action)),
            })
          }
        >
          {a.label}
        </button>
      ))}
    </span>
  );
}
