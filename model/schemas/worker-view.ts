// The response schemas of a serverless endpoint's workers (core/workers/worker-view.ts): the v2
// worker (`GET /v2/serverless/{id}/workers`) and the v1 pod a worker is listed as (`/v1/endpoints`
// with includeWorkers). Each names every field of its view (api/schemas/response-serializers.ts).
import { WORKER_STATES } from '../records/worker.ts';

const nullableString = { type: ['string', 'null'] } as const;

/** toWorkerView */
export const workerViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: WORKER_STATES },
    isStale: { type: 'boolean', description: 'made for an older endpoint version: it is being replaced' },
    version: { type: 'integer' },
    gpuCount: { type: 'integer' },
    gpuTypeId: nullableString,
    image: { type: 'string' },
    uptimeSeconds: { type: 'integer' },
    dataCenterId: nullableString,
    startedAt: nullableString,
    createdAt: { type: 'string' },
    machineId: { ...nullableString, description: 'the host it runs on' },
    costPerHr: { type: 'number', description: 'USD per hour, billed to the endpoint' },
    statusReason: { ...nullableString, description: 'why it is in its state' },
  },
} as const;

/** `GET /v2/serverless/{id}/workers` */
export const workerListViewSchema = { type: 'object', properties: { workers: { type: 'array', items: workerViewSchema } } } as const;

/** toWorkerPodView: the v1 `Pod` fields a worker has */
export const workerPodViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    desiredStatus: { type: 'string' },
    status: { type: 'string', enum: WORKER_STATES },
    statusReason: nullableString,
    image: { type: 'string' },
    endpointId: { type: 'string' },
    slsVersion: { type: 'integer' },
    isStale: { type: 'boolean' },
    machineId: nullableString,
    dataCenterId: nullableString,
    gpu: { type: ['object', 'null'], properties: { id: { type: 'string' }, count: { type: 'integer' } } },
    costPerHr: { type: 'number' },
    containerDiskInGb: { type: 'integer' },
    lastStartedAt: nullableString,
    createdAt: { type: 'string' },
  },
} as const;
