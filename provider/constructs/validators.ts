// Synth-time validation: the API's own validators and schemas (model/), so a wrong stack fails at
// `app.synth()` with the words the API would answer. Each throws the API's GpufleetError.
import { validatePodCreate } from '../../model/pod-validation.ts';
import { checkPortRanges } from '../../model/schemas/common.ts';
import { endpointCreateSchema, type EndpointCreateInput } from '../../model/schemas/endpoint.ts';
import { networkVolumeCreateSchema, type NetworkVolumeCreateInput } from '../../model/schemas/network-volume.ts';
import { templateCreateSchema, type TemplateCreateInput } from '../../model/schemas/template.ts';
import { nameSchema } from '../../model/schemas/common.ts';
import { check, compile, fail422 } from '../../model/validation.ts';
import { checkPodShape, checkTemplateRegistry, checkWorkerBounds } from '../../model/resource-rules.ts';

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
  checkPodShape(validatePodCreate(spec));
}

export function validateTemplateSpec(spec: unknown): void {
  const input = check(templateCreate, spec, 'template');
  const errors = checkPortRanges(input.ports);
  if (errors.length) fail422('template', errors);
  checkTemplateRegistry(input);
}

export function validateNetworkVolumeSpec(spec: unknown): void {
  const input = check(volumeCreate, spec, 'network volume');
  if (input.dataCenterId === undefined && input.dataCenter === undefined)
    fail422('network volume', ['$.dataCenterId: is required (or $.dataCenter)']);
}

export function validateEndpointSpec(spec: unknown): void {
  const input = check(endpointCreate, spec, 'endpoint');
  // the API's rule (api/services/endpoint-service.ts), checked here only when both bounds are declared
  if (input.workersMin !== undefined && input.workersMax !== undefined) checkWorkerBounds(input.workersMin, input.workersMax);
}

export function validateRegistryRefSpec(spec: unknown): void {
  check(registryRef, spec, 'registry reference');
}
