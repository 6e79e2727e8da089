// Synth-time validation: the API's own validators and schemas (model/), so a wrong stack fails at
// `app.synth()` with the words the API would answer. Each throws the API's GpufleetError.
import { validatePodCreate } from '../../model/pod-validation.ts';
import { checkPortRanges } from '../../model/schemas/common.ts';
import { endpointCreateSchema, type EndpointCreateInput } from '../../model/schemas/endpoint.ts';
import { networkVolumeCreateSchema, type NetworkVolumeCreateInput } from '../../model/schemas/network-volume.ts';
import { templateCreateSchema, type TemplateCreateInput } from '../../model/schemas/template.ts';
import { nameSchema } from '../../model/schemas/common.ts';
import { check, compile, fail400, fail422 } from '../../model/validation.ts';

// compile() caches by schema object, so sharing the API's schema objects costs nothing twice
const templateCreate = compile<TemplateCreateInput>(templateCreateSchema);
const volumeCreate = compile<NetworkVolumeCreateInput>(networkVolumeCreateSchema);
const endpointCreate = compile<EndpointCreateInput>(endpointCreateSchema);
const registryRef = compile<{ name: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: nameSchema },
});

export function validatePodSpec(spec: unknown): void {
  const input = validatePodCreate(spec);
  // The two create rules that need no other record. They are checked in api/services/pod-builder.ts
  // (same words); they belong in model/pod-validation.ts, where both sides could share them.
  if (!input.image && !input.templateId) fail422('pod', ['$.image: is required (or give a templateId whose template has an image)']);
  if (!input.gpu && !input.cpu) fail422('pod', ['$: must have either gpu or cpu']);
  if (input.cpu && input.mounts?.persistent)
    fail400('Persistent mounts are not allowed on CPU pods; use a network volume.', ['$.mounts.persistent: not allowed on CPU pods']);
}

export function validateTemplateSpec(spec: unknown): void {
  const input = check(templateCreate, spec, 'template');
  const errors = checkPortRanges(input.ports);
  if (errors.length) fail422('template', errors);
  if (input.public && input.registry)
    fail400('A public template cannot use registry credentials: other accounts would pull with them.', [
      '$.registry: must be null on a public template',
    ]);
}

export function validateNetworkVolumeSpec(spec: unknown): void {
  const input = check(volumeCreate, spec, 'network volume');
  if (input.dataCenterId === undefined && input.dataCenter === undefined)
    fail422('network volume', ['$.dataCenterId: is required (or $.dataCenter)']);
}

export function validateEndpointSpec(spec: unknown): void {
  const input = check(endpointCreate, spec, 'endpoint');
  // the API's rule (api/services/endpoint-service.ts), checked here only when both bounds are declared
  if (input.workersMin !== undefined && input.workersMax !== undefined && input.workersMin > input.workersMax)
    fail400(`workersMin (${input.workersMin}) must not exceed workersMax (${input.workersMax}).`, ['$.workersMin: must be at most workersMax']);
}

export function validateRegistryRefSpec(spec: unknown): void {
  check(registryRef, spec, 'registry reference');
}
