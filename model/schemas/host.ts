// Schemas of the fleet-admin requests.
import type { InputOf } from './input-type.ts';
import { conditionSchema } from './pod-view.ts';

/** an IPv4 address the host has (checked on the host), where the other hosts send its pods' overlay packets */
const overlayAddressInput = {
  type: 'string',
  minLength: 7,
  maxLength: 15,
  description: "the host's IPv4 address for the overlay (one it has; default: the enrolled address, or for a host enrolled by name its own address of the control plane's SSH connection)",
} as const;

export const hostEnrollSchema = {
  $id: 'HostEnroll',
  type: 'object',
  additionalProperties: false,
  required: ['ssh', 'privateKey'],
  properties: {
    ssh: { type: 'string', minLength: 3, maxLength: 300, description: 'user@host[:port]' },
    privateKey: { type: 'string', minLength: 32, maxLength: 16384, description: 'OpenSSH or PEM private key; stored encrypted' },
    dataCenterId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
    cloud: { type: 'string', enum: ['SECURE', 'COMMUNITY'] },
    overlayAddress: overlayAddressInput,
  },
} as const;

/** PATCH /v2/hosts/{id}: the host's address for the overlay (null: the default; docs/networking.md) */
export const hostUpdateSchema = {
  $id: 'HostUpdate',
  type: 'object',
  additionalProperties: false,
  required: ['overlayAddress'],
  properties: {
    overlayAddress: { anyOf: [overlayAddressInput, { type: 'null' }] },
  },
} as const;

export const hostDrainSchema = {
  $id: 'HostDrain',
  type: 'object',
  additionalProperties: false,
  properties: {
    drained: { type: 'boolean', default: true },
    /** also move every movable pod off, and stop the rest at the deadline: a Go duration ("10m") or seconds */
    deadline: {
      anyOf: [{ type: 'string', maxLength: 64 }, { type: 'number' }],
      description: 'a Go-style duration ("10m", "1h30m") or a number of seconds; moves the pods off before it',
    },
  },
} as const;

const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

const nullableString = { type: ['string', 'null'] } as const;
const health = { type: 'string', enum: ['HEALTHY', 'WARNING', 'FAILURE'] } as const;

/** One incident of a GPU (model/records/host.ts GpuIncident). */
export const gpuIncidentSchema = {
  type: 'object',
  required: ['kind', 'xid', 'counter', 'mnemonic', 'action', 'health', 'live', 'message', 'firstSeen', 'liveSince', 'lastSeen', 'count', 'resolvedAt'],
  properties: {
    kind: { type: 'string', enum: ['xid', 'counter'] },
    xid: { type: ['integer', 'null'] },
    counter: nullableString,
    mnemonic: { type: 'string' },
    action: { type: 'string' },
    health,
    live: { type: 'boolean' },
    message: { type: 'string' },
    firstSeen: { type: 'string', format: 'date-time' },
    liveSince: nullableTime,
    lastSeen: { type: 'string', format: 'date-time' },
    count: { type: 'integer' },
    resolvedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/** A GPU of a host as GET /v2/hosts/{id} shows it. */
export const hostGpuViewSchema = {
  type: 'object',
  required: ['index', 'uuid', 'name', 'memoryMiB', 'typeId', 'health', 'incidents', 'busId', 'diagnostic'],
  additionalProperties: true,
  properties: {
    index: { type: 'integer' },
    uuid: { type: 'string' },
    name: { type: 'string' },
    memoryMiB: { type: 'integer' },
    typeId: nullableString,
    health,
    incidents: { type: 'array', items: gpuIncidentSchema },
    busId: nullableString,
    diagnostic: {
      type: ['object', 'null'],
      required: ['at', 'passed', 'method', 'level', 'summary', 'by'],
      properties: {
        at: { type: 'string', format: 'date-time' },
        passed: { type: 'boolean' },
        method: { type: 'string', enum: ['dcgmi', 'driver-check', 'cleared'] },
        level: { type: 'integer' },
        summary: { type: 'string' },
        by: { type: 'string' },
      },
    },
  },
} as const;

/** The drain with a deadline as the host view shows it (docs/gpu-health.md, "Acting on it"). */
export const hostDrainViewSchema = {
  type: ['object', 'null'],
  required: ['startedAt', 'deadline', 'total', 'moved', 'stopped', 'moving', 'remaining', 'finishedAt'],
  properties: {
    startedAt: { type: 'string', format: 'date-time' },
    deadline: { type: 'string', format: 'date-time' },
    total: { type: 'integer', description: 'pods on the host when the drain started' },
    moved: { type: 'integer', description: 'placed on another host' },
    stopped: { type: 'integer', description: 'stopped: could not move, or left at the deadline' },
    moving: { type: 'array', items: { type: 'string' }, description: 'moved and not running yet (at most GPUFLEET_DRAIN_PARALLEL)' },
    remaining: { type: ['integer', 'null'], description: 'pods still on the host that want to run; null in lists (GET /v2/hosts), which do not read the pods' },
    finishedAt: nullableTime,
  },
} as const;

const stringList = { type: 'array', items: { type: 'string' } } as const;

/** What the probe found on the host (model/records/host.ts HostFacts), its GPUs with their health. */
const hostFactsViewSchema = {
  type: 'object',
  properties: {
    arch: { type: 'string' },
    cpuCount: { type: 'integer' },
    cpuModel: { type: 'string' },
    memoryGb: { type: 'number' },
    diskFreeGb: { type: 'number' },
    dockerVersion: { type: 'string' },
    dockerRuntimes: stringList,
    driverVersion: nullableString,
    cudaVersion: nullableString,
    // every GPU with its health and incidents (docs/gpu-health.md)
    gpus: { type: 'array', items: hostGpuViewSchema },
    addresses: stringList,
    dockerPools: stringList,
  },
} as const;

/**
 * The host as the host routes answer it: the record less its private key (api/rest/hosts.ts hostView).
 * Answers are written from this schema, so it names every field of the record (a field added to
 * HostRecord goes here too; test/api/schemas/serializers-on-off.test.ts fails otherwise).
 */
export const hostViewSchema = {
  type: 'object',
  required: ['id', 'address', 'port', 'status', 'drained', 'conditions'],
  properties: {
    id: { type: 'string' },
    address: { type: 'string' },
    port: { type: 'integer' },
    user: { type: 'string' },
    hostKeySha256: { type: 'string' },
    rejectedHostKeySha256: nullableString,
    dataCenterId: { type: 'string' },
    cloud: { type: 'string', enum: ['SECURE', 'COMMUNITY'] },
    status: { type: 'string', enum: ['READY', 'DRAINING', 'UNREACHABLE'] },
    statusReason: { type: ['string', 'null'] },
    drained: { type: 'boolean' },
    drain: hostDrainViewSchema,
    lost: {
      type: ['object', 'null'],
      properties: { since: { type: 'string', format: 'date-time' }, at: { type: 'string', format: 'date-time' }, confirmed: { type: 'boolean' } },
    },
    stuckContainers: { type: 'array', items: { type: 'object', properties: { podId: { type: 'string' }, since: { type: 'string', format: 'date-time' } } } },
    conditions: { type: 'array', items: conditionSchema },
    missedHeartbeats: { type: 'integer' },
    unansweredSince: nullableTime,
    lastSeenAt: nullableTime,
    facts: hostFactsViewSchema,
    privateImages: {
      type: 'array',
      items: { type: 'object', properties: { imageId: { type: 'string' }, accountIds: stringList } },
    },
    /** the GPU watcher's position in the host's kernel log (model/records/host.ts HostGpuWatch) */
    gpuWatch: {
      type: 'object',
      properties: {
        source: nullableString,
        cursor: nullableString,
        bootId: nullableString,
        monotonicUs: { type: ['number', 'null'] },
        linesAtMonotonic: { type: 'integer' },
        firstReadAt: nullableTime,
        firstReadBootId: nullableString,
        firstReadMonotonicUs: { type: ['number', 'null'] },
        counters: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'number' } } },
      },
    },
    /** what the overlay script reported (model/records/host.ts HostOverlayFacts; docs/networking.md) */
    overlay: {
      type: 'object',
      properties: { underlayMtu: { type: ['integer', 'null'] }, wireguardPublicKey: nullableString },
    },
    /** the kernel's boot id the last pass read (a new one: the host restarted; docs/pods.md) */
    bootId: nullableString,
    /** the host's own address of the control plane's SSH connection, as the last pass read it */
    connectedAddress: nullableString,
    /** the operator's address for the overlay (null: the default) */
    overlayAddress: nullableString,
    /** the address the overlay uses for the host now: overlayAddress, else the enrolled IPv4 address, else connectedAddress; null: none yet */
    overlayUnderlay: nullableString,
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

/** GET /v2/hosts */
export const hostListViewSchema = { type: 'object', properties: { hosts: { type: 'array', items: hostViewSchema } } } as const;

export type HostEnrollInput = InputOf<typeof hostEnrollSchema>;
export type HostDrainInput = InputOf<typeof hostDrainSchema>;
export type HostUpdateInput = InputOf<typeof hostUpdateSchema>;

/** a GPU's uuid as nvidia-smi prints it */
const gpuUuid = { type: 'string', pattern: '^GPU-[0-9A-Fa-f-]{8,64}$', description: 'GPU uuid (GPU-…), as nvidia-smi prints it' } as const;

/** POST /v2/hosts/{id}/diagnose (docs/gpu-health.md, "Returning to service") */
export const hostDiagnoseSchema = {
  $id: 'HostDiagnose',
  type: 'object',
  additionalProperties: false,
  properties: {
    gpu: gpuUuid,
    level: { type: 'integer', enum: [1, 2], default: 1, description: 'dcgmi diag run level: 1 quick, 2 medium (about two minutes)' },
  },
} as const;

/** POST /v2/hosts/{id}/gpus/{uuid}/clear: an operator returns a GPU to service by hand */
export const hostGpuClearSchema = {
  $id: 'HostGpuClear',
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', maxLength: 500, description: 'why, recorded in the event' } },
} as const;

export const gpuUuidParams = {
  type: 'object',
  required: ['id', 'uuid'],
  // a uuid no GPU has is a 404 (api/rest/hosts.ts), not a malformed request
  properties: { id: { type: 'string' }, uuid: { type: 'string', description: gpuUuid.description } },
} as const;

export type HostDiagnoseInput = InputOf<typeof hostDiagnoseSchema>;
export type HostGpuClearInput = InputOf<typeof hostGpuClearSchema>;

/** POST /v2/hosts/{id}/diagnose's answer (core/hosts/gpu-diagnostics.ts DiagnoseResult, with the host's view) */
export const hostDiagnoseResultSchema = {
  type: 'object',
  properties: {
    hostId: { type: 'string' },
    method: { type: 'string', enum: ['dcgmi', 'driver-check'] },
    level: { type: 'integer', description: "dcgmi's run level; 0 for the driver check" },
    passed: { type: 'boolean', description: 'every GPU judged passed' },
    gpus: {
      type: 'array',
      items: { type: 'object', properties: { index: { type: 'integer' }, uuid: { type: 'string' }, passed: { type: 'boolean' }, summary: { type: 'string' }, health: { type: 'string' } } },
    },
    host: hostViewSchema,
  },
} as const;
