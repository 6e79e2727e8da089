// The Pod as every interface returns it (spec 2.1). Tests validate responses against this schema,
// so "every field always present, exactly one of gpu and cpu" is checked, not assumed.
import { cpuConfigSchema, mountsSchema } from './pod.ts';
import { eventViewSchema } from '../records/event.ts';

const nullableString = { type: ['string', 'null'] } as const;

export const runtimeSchema = {
  type: ['object', 'null'],
  properties: {
    uptime: { type: 'integer' },
    gpus: {
      type: 'array',
      items: { type: 'object', properties: { util: { type: 'integer' }, memoryUtil: { type: 'integer' } } },
    },
    cpu: { type: 'object', properties: { util: { type: 'integer' } } },
    memory: { type: 'object', properties: { util: { type: 'integer' } } },
    ports: {
      type: 'array',
      items: {
        type: 'object',
        required: ['private', 'public', 'type', 'ip', 'url'],
        properties: {
          private: { type: 'integer' },
          public: { type: ['integer', 'null'] },
          type: { type: 'string' },
          ip: nullableString,
          /** an HTTP port's URL on the proxy domain (docs/connect.md); null for other ports or without a proxy domain */
          url: { ...nullableString, format: 'uri' },
        },
      },
    },
  },
} as const;

export const sshAccessSchema = {
  type: ['object', 'null'],
  required: ['host', 'port', 'username', 'command'],
  properties: {
    host: { type: 'string' },
    port: { type: 'integer' },
    username: { type: 'string' },
    command: { type: 'string' },
  },
} as const;

export const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: { type: 'string' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    reason: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$' },
    message: { type: 'string' },
    lastTransitionTime: { type: 'string', format: 'date-time' },
  },
} as const;

export const podViewSchema = {
  type: 'object',
  required: [
    'id', 'name', 'status', 'actions', 'image', 'args', 'disk', 'ports', 'env', 'registry', 'mounts', 'cloud',
    'dataCenterId', 'template', 'cost', 'locked', 'globalNetworking', 'runtime', 'createdAt', 'startedAt',
    'interruptible', 'bidPerGpu',
  ],
  oneOf: [
    { required: ['gpu'], not: { required: ['cpu'] } },
    { required: ['cpu'], not: { required: ['gpu'] } },
  ],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    status: { type: 'string', enum: ['PROVISIONING', 'STARTING', 'RUNNING', 'EXITED', 'ERROR', 'TERMINATED'] },
    actions: { type: 'array', items: { type: 'string', enum: ['start', 'stop', 'restart', 'terminate'] } },
    image: { type: 'string' },
    args: { type: 'string' },
    disk: { type: 'integer', minimum: 1 },
    ports: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    registry: nullableString,
    mounts: mountsSchema,
    gpu: {
      type: 'object',
      required: ['id', 'count'],
      properties: { id: { type: 'string' }, count: { type: 'integer', minimum: 1 } },
    },
    cpu: cpuConfigSchema,
    cloud: { type: 'string', enum: ['SECURE', 'COMMUNITY'] },
    dataCenterId: nullableString,
    template: nullableString,
    cost: { type: 'number' },
    locked: { type: 'boolean' },
    globalNetworking: {
      type: 'object',
      required: ['enabled'],
      properties: { enabled: { type: 'boolean' }, ip: { type: 'string' }, internalDns: { type: 'string' } },
    },
    runtime: runtimeSchema,
    createdAt: { type: 'string', format: 'date-time' },
    startedAt: { type: ['string', 'null'], format: 'date-time' },
    cudaVersion: nullableString,
    /** how to reach the pod's SSH server (docs/connect.md): each null when there is no such way now */
    ssh: {
      type: 'object',
      required: ['proxy', 'direct'],
      properties: { proxy: sshAccessSchema, direct: sshAccessSchema },
    },
    desiredStatus: { type: 'string' },
    statusReason: nullableString,
    /** docs/pods.md "Conditions": Scheduled, ImageReady, ContainerRunning, in the manner of Kubernetes */
    conditions: { type: 'array', items: conditionSchema },
    machineId: nullableString,
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    /** docs/teams.md "Interruptible pods": a spot pod, preemptible, billed at its bid */
    interruptible: { type: 'boolean' },
    /** USD per GPU-hour an interruptible pod bids; null for on-demand pods */
    bidPerGpu: { type: ['number', 'null'] },
    /** docs/pods.md#stop-and-terminate-timers: when the pod's timer stops / terminates it; null when none */
    stopAfter: { type: ['string', 'null'], format: 'date-time' },
    terminateAfter: { type: ['string', 'null'], format: 'date-time' },
    /** one pod's answers (create, get, update, action): its last few events, oldest first; not in lists (docs/events.md) */
    events: { type: 'array', maxItems: 5, items: eventViewSchema },
  },
} as const;
