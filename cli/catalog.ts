// `gpufleet gpus list|get`, `gpufleet cpus list`, `gpufleet datacenters list`: the catalog with
// prices and stock (GET /v2/catalog/*, docs/gpu-catalog.md). Read-only: the operator's prices.json
// and the enrolled hosts make it.
import { Command } from 'commander';
import { ApiClient, CatalogApi, type ResourceView } from '../client/index.ts';
import { printJson, printRecord, printTable, withSpinner } from './output.ts';

const api = () => new CatalogApi(new ApiClient());

interface Gpu extends ResourceView {
  price?: { secure?: number; community?: number };
  availability?: { free?: number; stockStatus?: string };
}

/** a list command printing `rows` as JSON or a table */
function listCommand<T>(name: string, description: string, read: () => Promise<T[]>, columns: [string, (r: T) => unknown][]): Command {
  return new Command(name)
    .description(description)
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const rows = await withSpinner(description, o.json, read);
      if (o.json) return printJson(rows);
      printTable(
        columns.map(([h]) => h),
        rows.map((r) => columns.map(([, v]) => v(r))),
      );
    });
}

export function gpusCommand(): Command {
  const gpus = new Command('gpus').description('GPU types: prices per GPU-hour and stock');
  gpus.addCommand(
    listCommand<Gpu>('list', 'listing GPU types', () => api().gpus(), [
      ['id', (g) => g.id],
      ['name', (g) => g.name],
      ['GB', (g) => g.memory],
      ['secure $/h', (g) => g.price?.secure],
      ['community $/h', (g) => g.price?.community],
      ['free', (g) => g.availability?.free],
      ['stock', (g) => g.availability?.stockStatus],
    ]),
  );
  gpus
    .command('get')
    .description('one GPU type, with its data centers')
    .argument('<id>', 'GPU type id, e.g. "NVIDIA H100 80GB HBM3"')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const g = await withSpinner(`reading ${id}`, o.json, () => api().gpu(id));
      if (o.json) printJson(g);
      else printRecord(g);
    });
  return gpus;
}

export function cpusCommand(): Command {
  return new Command('cpus').description('CPU flavors: vCPU counts, memory and price').addCommand(
    listCommand<ResourceView>('list', 'listing CPU flavors', () => api().cpus(), [
      ['id', (c) => c.id],
      ['name', (c) => c.displayName],
      ['vCPUs', (c) => c.vcpuCounts],
      ['GB per vCPU', (c) => c.memoryPerVcpuGb],
      ['$/vCPU-h', (c) => c.pricePerVcpuHour],
    ]),
  );
}

export function dataCentersCommand(): Command {
  return new Command('datacenters').description('data centers and the GPUs free in each').addCommand(
    listCommand<ResourceView>('list', 'listing data centers', () => api().dataCenters(), [
      ['id', (d) => d.id],
      ['hosts', (d) => d.hosts],
      ['GPUs free', (d) => ((d.gpuAvailability as { gpuTypeId: string; free: number }[] | undefined) ?? []).map((g) => `${g.free} × ${g.gpuTypeId}`)],
    ]),
  );
}
