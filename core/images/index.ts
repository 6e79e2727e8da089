// core/images: which images a tenant may run: registry references, the registry policy and lookup,
// and the registry credentials the provisioner logs in with.
export { checkImageRegistry, refusedRegistriesInUse } from './image-policy.ts';
export { pullRefusal, systemLookup } from './registry-lookup.ts';
export { checkRegistry } from './registry-ref.ts';
export { RegistryService } from './registry-service.ts';
