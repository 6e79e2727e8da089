// `gpufleet templates|volumes|registries|public-endpoints list|get|create|update|delete`: the resource
// groups whose verbs are exactly resource-command.ts's, each with its columns and body options.
import type { Command } from 'commander';
import { NetworkVolumesApi, PublicEndpointsApi, RegistriesApi, TemplatesApi, type PublicEndpointView, type ResourceView } from '../client/index.ts';
import { containerBody, containerOptions, type ContainerOptions } from './container-options.ts';
import { intArg, numberArg, readStdin } from './output.ts';
import { defined, resourceCommand } from './resource-command.ts';

export function templatesCommand(): Command {
  const options = (c: Command) =>
    containerOptions(c.option('--name <name>', 'template name'))
      .option('--serverless', 'a template for serverless endpoints')
      .option('--public', 'every account may use it (operators)');
  const body = (o: Record<string, unknown>) =>
    defined({ name: o.name, ...containerBody(o as ContainerOptions), serverless: o.serverless, public: o.public });
  return resourceCommand<ResourceView>({
    name: 'templates',
    noun: 'template',
    description: 'pod and serverless templates',
    api: (c) => new TemplatesApi(c) as never,
    columns: [
      ['id', (t) => t.id],
      ['name', (t) => t.name],
      ['image', (t) => t.image],
      ['serverless', (t) => t.serverless],
    ],
    create: { options, body },
    update: { options, body },
    deletes: 'refused while a pod or endpoint uses it',
  });
}

export function volumesCommand(): Command {
  return resourceCommand<ResourceView>({
    name: 'volumes',
    noun: 'network volume',
    description: 'network volumes (mounted at /workspace, or /runpod-volume in workers)',
    api: (c) => new NetworkVolumesApi(c) as never,
    columns: [
      ['id', (v) => v.id],
      ['name', (v) => v.name],
      ['size GB', (v) => v.size],
      ['dc', (v) => v.dataCenterId],
    ],
    create: {
      options: (c) => c.requiredOption('--name <name>', 'volume name').requiredOption('--size <gb>', 'size, GB', intArg).option('--datacenter <id>', 'its data center'),
      body: (o) => defined({ name: o.name, size: o.size, dataCenterId: o.datacenter }),
    },
    update: {
      options: (c) => c.option('--name <name>', 'volume name').option('--size <gb>', 'new size, GB (only grows)', intArg),
      body: (o) => defined({ name: o.name, size: o.size }),
    },
    deletes: 'its data is gone; refused while a pod mounts it',
  }).alias('network-volumes');
}

/** the password from stdin only: on the command line it would show in `ps` and the shell's history */
async function password(o: Record<string, unknown>): Promise<string | undefined> {
  return o.passwordStdin ? readStdin() : undefined;
}

export function registriesCommand(): Command {
  const group = resourceCommand<ResourceView>({
    name: 'registries',
    noun: 'registry credential',
    description: 'container registry credentials for private images (the password is never shown)',
    api: (c) => new RegistriesApi(c) as never,
    columns: [
      ['id', (r) => r.id],
      ['name', (r) => r.name],
      ['username', (r) => r.username],
    ],
    create: {
      options: (c) => c.requiredOption('--name <name>', 'a name for the credential').requiredOption('--username <user>', 'registry user').option('--password-stdin', 'read the password from stdin'),
      body: (o) => defined({ name: o.name, username: o.username, password: o.password }),
    },
    update: {
      options: (c) => c.option('--username <user>', 'registry user').option('--password-stdin', 'read the new password from stdin'),
      body: (o) => defined({ username: o.username, password: o.password }),
    },
  });
  // the password is read before the body is built (a preAction hook: it is async)
  for (const verb of ['create', 'update']) {
    group.commands
      .find((c) => c.name() === verb)!
      .hook('preAction', async (cmd) => {
        const pw = await password(cmd.opts());
        if (pw !== undefined) cmd.setOptionValue('password', pw);
      });
  }
  return group;
}

export function publicEndpointsCommand(): Command {
  return resourceCommand<PublicEndpointView>({
    name: 'public-endpoints',
    noun: 'public endpoint',
    description: 'the model catalog every account may call at /v2/<slug>/run (operators publish)',
    api: (c) => new PublicEndpointsApi(c) as never,
    idOf: (p) => p.slug,
    idName: 'slug',
    columns: [
      ['slug', (p) => p.slug],
      ['name', (p) => p.name],
      ['unit', (p) => (p.pricing as { unit?: string } | undefined)?.unit],
      ['USD per unit', (p) => (p.pricing as { usdPerUnit?: number } | undefined)?.usdPerUnit],
    ],
    create: {
      options: (c) =>
        c
          .requiredOption('--slug <slug>', 'the id callers use: /v2/<slug>/run')
          .requiredOption('--endpoint <id>', "a QUEUE endpoint of the operator's account")
          .requiredOption('--name <name>', 'display name')
          .option('--description <text>', 'what it does')
          .requiredOption('--unit <unit>', 'pricing unit: request | second | image | megapixel | token')
          .requiredOption('--usd-per-unit <usd>', 'USD per unit', numberArg)
          .option('--max-units-per-job <n>', 'the most units one job is charged (required but for unit request)', numberArg),
      body: (o) =>
        defined({
          slug: o.slug,
          endpointId: o.endpoint,
          name: o.name,
          description: o.description,
          pricing: defined({ unit: o.unit, usdPerUnit: o.usdPerUnit, maxUnitsPerJob: o.maxUnitsPerJob }),
        }),
    },
    deletes: 'callers get 404 from then on; the endpoint stays',
  });
}
