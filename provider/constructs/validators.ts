// Synth-time validation: the API's own validators and schemas (model/), so a wrong stack fails at
// `app.synth()` with the words the API would answer. Each throws the API's GpufleetError.
import { validatePodCreate } from '../../model/index.ts';
import { checkPortRanges } from '../../model/index.ts';
import { endpointCreateSchema, type EndpointCreateInput } from '../../model/index.ts';
import { networkVolumeCreateSchema, type NetworkVolumeCreateInput } from '../../model/index.ts';
import { templateCreateSchema, type TemplateCreateInput } from '../../model/index.ts';
import { nameSchema } from '../../model/index.ts';
import { check, compile, fail422 } from '../../model/index.ts';
import { checkPodShape, checkTemplateRegistry, checkWorkerBounds } from '../../model/index.ts';

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
  // the API's rule (core/endpoints/endpoint-service.ts), checked here only when both bounds are declared
  if (input.workersMin !== undefined && input.workersMax !== undefined) checkWorkerBounds(input.workersMin, input.workersMax);
}

export function validateRegistryRefSpec(spec: unknown): void {
  check(registryRef, spec, 'registry reference');
}
