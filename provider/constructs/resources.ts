// The gpufleet constructs. Their props ARE the API's create bodies (model/schemas), so what type-checks
// here is what the API takes, and `<construct>.id` can be passed wherever the API takes an id.
import type { Construct } from 'constructs';
import type { EndpointCreateInput } from '../../model/index.ts';
import type { NetworkVolumeCreateInput } from '../../model/index.ts';
import type { PodCreateInput } from '../../model/index.ts';
import type { TemplateCreateInput } from '../../model/index.ts';
import { GpufleetResource } from './gpufleet-resource.ts';
import {
  validateEndpointSpec,
  validateNetworkVolumeSpec,
  validatePodSpec,
  validateRegistryRefSpec,
  validateTemplateSpec,
} from './validators.ts';

export type PodProps = PodCreateInput;
export type NetworkVolumeProps = NetworkVolumeCreateInput;
export type TemplateProps = TemplateCreateInput;
export type ServerlessEndpointProps = EndpointCreateInput;
export interface RegistryRefProps {
  /** name of a registry credential that already exists (POST /v2/registries); its password never enters a stack */
  name: string;
}

/** A GPU or CPU pod (POST /v2/pods). Waits for RUNNING on apply unless `--no-wait`. */
export class Pod extends GpufleetResource {
  constructor(scope: Construct, id: string, readonly props: PodProps) {
    super(scope, id, 'pod', props, validatePodSpec);
  }
}

/** A network volume (POST /v2/network-volumes). Holds data: deleting or replacing it asks first. */
export class NetworkVolume extends GpufleetResource {
  constructor(scope: Construct, id: string, readonly props: NetworkVolumeProps) {
    super(scope, id, 'network-volume', props, validateNetworkVolumeSpec);
  }
}

/** A pod/endpoint template (POST /v2/templates). */
export class Template extends GpufleetResource {
  constructor(scope: Construct, id: string, readonly props: TemplateProps) {
    super(scope, id, 'template', props, validateTemplateSpec);
  }
}

/** A serverless endpoint (POST /v1/endpoints); `templateId: template.id` ties it to a Template. */
export class ServerlessEndpoint extends GpufleetResource {
  constructor(scope: Construct, id: string, readonly props: ServerlessEndpointProps) {
    super(scope, id, 'endpoint', props, validateEndpointSpec);
  }
}

/**
 * An existing registry credential, looked up by name at plan time (never created or deleted: its
 * password must not be written into the synth output). Pass `ref.id` as a pod's or template's `registry`.
 */
export class RegistryRef extends GpufleetResource {
  constructor(scope: Construct, id: string, readonly props: RegistryRefProps) {
    super(scope, id, 'registry-ref', props, validateRegistryRefSpec);
  }
}
