// The container fields a pod and a template share (model/schemas: image, args, disk, env, ports,
// registry), as the same options on `pods create|update` and `templates create|update`.
import type { Command } from 'commander';
import { intArg, keyValueArg, listArg } from './output.ts';
import { defined } from './resource-command.ts';

export interface ContainerOptions {
  image?: string;
  args?: string;
  disk?: number;
  env?: Record<string, string>;
  port?: string[];
  registry?: string;
}

export function containerOptions(c: Command): Command {
  return c
    .option('--image <image>', 'container image')
    .option('--args <args>', "the container's command line (the image's CMD when empty)")
    .option('--disk <gb>', 'container disk, GB', intArg)
    .option('--env <KEY=VALUE>', 'environment variable (repeatable)', keyValueArg)
    .option('--port <port>', 'exposed port, e.g. 8888/http or 22/tcp (repeatable or comma separated)', listArg)
    .option('--registry <id>', 'registry credentials id for a private image (gpufleet registries list)');
}

export function containerBody(o: ContainerOptions): Record<string, unknown> {
  return defined({ image: o.image, args: o.args, disk: o.disk, env: o.env, ports: o.port, registry: o.registry });
}
