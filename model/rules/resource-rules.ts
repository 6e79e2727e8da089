// Rules across fields that need no other record: checked by the API services after defaults and
// templates are applied, and by the declarative constructs at synth, with the same words.
import type { Mounts } from '../records/pod.ts';
import { fail400, fail422 } from './validation.ts';

/** A pod needs an image (its own or its template's) and exactly one of gpu/cpu; no persistent mount on CPU. */
export function checkPodShape(p: { image?: string | undefined; templateId?: string | undefined; gpu?: unknown; cpu?: unknown; mounts?: Mounts | undefined }): void {
  if (!p.image && !p.templateId) fail422('pod', ['$.image: is required (or give a templateId whose template has an image)']);
  if (!p.gpu && !p.cpu) fail422('pod', ['$: must have either gpu or cpu']);
  if (p.cpu && p.mounts?.persistent)
    fail400('Persistent mounts are not allowed on CPU pods; use a network volume.', ['$.mounts.persistent: not allowed on CPU pods']);
}

/** Registry secrets must not sit behind a template every account can use. */
export function checkTemplateRegistry(t: { public?: boolean | undefined; registry?: string | null | undefined }): void {
  if (t.public && t.registry)
    fail400('A public template cannot use registry credentials: other accounts would pull with them.', [
      '$.registry: must be null on a public template',
    ]);
}

export function checkWorkerBounds(workersMin: number, workersMax: number): void {
  if (workersMin > workersMax)
    fail400(`workersMin (${workersMin}) must not exceed workersMax (${workersMax}).`, ['$.workersMin: must be at most workersMax']);
}
