// GET /v2/catalog/gpus, /cpus, /datacenters: what the fleet offers now.
import type { FastifyInstance } from 'fastify';
import { cpuFlavorListViewSchema, dataCenterListViewSchema, GpufleetError, gpuTypeListViewSchema, gpuTypeViewSchema } from '../../model/index.ts';
import type { Services } from '../../core/index.ts';
import type { GpuTypeInfo } from '../../core/index.ts';
import { errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';

export function gpuTypeView(t: GpuTypeInfo) {
  return {
    id: t.entry.id,
    name: t.entry.displayName,
    pool: t.entry.pool,
    manufacturer: t.entry.manufacturer,
    memory: t.entry.memoryInGb,
    secure: t.secure,
    community: t.community,
    price: { secure: t.price.SECURE, community: t.price.COMMUNITY },
    maxCount: { secure: t.maxCount.SECURE, community: t.maxCount.COMMUNITY },
    availability: { free: t.free, stockStatus: t.stockStatus },
    dataCenters: t.dataCenters,
  };
}

export function catalogRoutes(fastify: FastifyInstance, s: Services): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  const tags = ['catalog'];
  app.get('/v2/catalog/gpus', { config: { scope: 'read' }, schema: { tags, summary: 'GPU types in the fleet, with prices and stock', response: { 200: gpuTypeListViewSchema, ...errorResponses(401, 429) } } }, async () => ({
    gpus: (await s.offers.gpuTypes()).map(gpuTypeView),
  }));
  app.get('/v2/catalog/gpus/:id', { config: { scope: 'read' }, schema: { tags, summary: 'One GPU type', params: idParams, response: { 200: gpuTypeViewSchema, ...errorResponses(401, 404, 429) } } }, async (request) => {
    const id = request.params.id;
    const t = (await s.offers.gpuTypes()).find((g) => g.entry.id === id);
    if (!t) throw new GpufleetError('NOT_FOUND', `No GPU of type "${id}" is in the fleet.`);
    return gpuTypeView(t);
  });
  app.get('/v2/catalog/cpus', { config: { scope: 'read' }, schema: { tags, summary: 'CPU flavors', response: { 200: cpuFlavorListViewSchema, ...errorResponses(401, 429) } } }, async () => ({
    cpus: s.offers.cpuFlavors(),
  }));
  app.get('/v2/catalog/datacenters', { config: { scope: 'read' }, schema: { tags, summary: 'Data centers in the fleet', response: { 200: dataCenterListViewSchema, ...errorResponses(401, 429) } } }, async () => ({
    dataCenters: await s.offers.dataCenters(),
  }));
}
