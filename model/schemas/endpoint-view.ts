// The response schemas of the serverless endpoint views (api/schemas/response-serializers.ts writes
// answers from them, so each names every field): the v1 `Endpoint` (core/endpoints/endpoint-service.ts
// toEndpointView, with what api/rest/endpoints.ts adds) and the `requestUrls` both versions answer.
import { templateViewSchema } from './template.ts';
import { workerPodViewSchema } from './worker-view.ts';

export const stringArray = { type: 'array', items: { type: 'string' } } as const;
export const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** run…health for a QUEUE endpoint, base and health for a load balancer (core/endpoints/request-urls.ts) */
export const requestUrlsSchema = {
  type: 'object',
  properties: Object.fromEntries(['base', 'run', 'runSync', 'status', 'stream', 'cancel', 'retry', 'purgeQueue', 'health'].map((k) => [k, { type: 'string' }])),
} as const;

/**
 * The v1 `Endpoint` as `/v1/endpoints` answers it. `template` (includeTemplate) is the template's
 * view or null; `workers` (includeWorkers) lists the workers as v1 pods (workerPodViewSchema); `warnings` comes with create and update.
 */
export const endpointViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    userId: { type: 'string' },
    computeType: { type: 'string' },
    name: { type: 'string' },
    templateId: { type: 'string' },
    type: { type: 'string' },
    gpuTypeIds: stringArray,
    gpuCount: { type: 'integer' },
    workersMin: { type: 'integer' },
    workersMax: { type: 'integer' },
    idleTimeout: { type: 'integer' },
    scalerType: { type: 'string' },
    scalerValue: { type: 'integer' },
    networkVolumeId: { type: ['string', 'null'] },
    dataCenterIds: stringArray,
    cloud: { type: 'string' },
    flashboot: { type: 'boolean' },
    executionTimeoutMs: { type: 'integer' },
    allowedCudaVersions: stringArray,
    env: stringMap,
    resolvedGpuTypeIds: stringArray,
    version: { type: 'integer' },
    tags: stringMap,
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    requestUrls: requestUrlsSchema,
    template: { ...templateViewSchema, type: ['object', 'null'] },
    workers: { type: 'array', items: workerPodViewSchema },
    statusReason: { type: ['string', 'null'] },
    warnings: stringArray,
  },
} as const;
