// The response schemas of the catalog (`/v2/catalog/*`, api/rest/catalog.ts): GPU types with prices
// and stock, CPU flavors, data centers. Each names every field of its view.
const tiers = (type: 'number' | 'integer') => ({ type: 'object', properties: { secure: { type }, community: { type } } }) as const;
const stockStatus = { type: 'string', description: 'High, Medium, Low or None' } as const;

/** api/rest/catalog.ts gpuTypeView */
export const gpuTypeViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    pool: { type: ['string', 'null'], description: 'serverless pool; null for cards too small for any' },
    manufacturer: { type: 'string' },
    memory: { type: 'number', description: 'GB' },
    secure: { type: 'boolean' },
    community: { type: 'boolean' },
    price: { ...tiers('number'), description: 'USD per GPU-hour' },
    maxCount: { ...tiers('integer'), description: 'most GPUs of this type on one host' },
    availability: { type: 'object', properties: { free: { type: 'integer' }, stockStatus } },
    dataCenters: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** fleet/cpu-catalog.ts CpuFlavor */
export const cpuFlavorViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    displayName: { type: 'string' },
    vcpuCounts: { type: 'array', items: { type: 'integer' } },
    memoryPerVcpuGb: { type: 'number' },
    pricePerVcpuHour: { type: 'number' },
  },
} as const;

/** core/hosts/offer-service.ts DataCenterInfo */
export const dataCenterViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    hosts: { type: 'integer' },
    globalNetwork: { type: 'boolean' },
    gpuAvailability: {
      type: 'array',
      items: { type: 'object', properties: { gpuTypeId: { type: 'string' }, displayName: { type: 'string' }, free: { type: 'integer' }, stockStatus } },
    },
  },
} as const;

export const gpuTypeListViewSchema = { type: 'object', properties: { gpus: { type: 'array', items: gpuTypeViewSchema } } } as const;
export const cpuFlavorListViewSchema = { type: 'object', properties: { cpus: { type: 'array', items: cpuFlavorViewSchema } } } as const;
export const dataCenterListViewSchema = { type: 'object', properties: { dataCenters: { type: 'array', items: dataCenterViewSchema } } } as const;
