// Template queries and saveTemplate/deleteTemplate over TemplateService: GraphQL's flat input becomes
// the v2 template body (imageName → image, dockerArgs → args, volumeInGb → mounts.persistent, …).
import { GpufleetError } from '../../model/index.ts';
import type { TemplateRecord } from '../../model/index.ts';
import { fail422 } from '../../model/index.ts';
import { str, type GqlContext } from './context.ts';
import { DEFAULT_VOLUME_PATH, envObject, parsePorts, type GqlEnvInput } from './pod-input.ts';

export interface SaveTemplateInput {
  id?: string | null;
  name?: string | null;
  imageName?: string | null;
  dockerArgs?: string | null;
  containerDiskInGb?: number | null;
  volumeInGb?: number | null;
  volumeMountPath?: string | null;
  ports?: string | null;
  env?: (GqlEnvInput | null)[] | null;
  containerRegistryAuthId?: string | null;
  isServerless?: boolean | null;
  isPublic?: boolean | null;
  readme?: string | null;
  category?: string | null;
  startSsh?: boolean | null;
  startJupyter?: boolean | null;
}

/**
 * The v2 template body. On create, empty values mean "not set"; on update (saveTemplate with an id,
 * which runpodctl sends with every field) they clear: "" ports → [], [] env → {}, volumeInGb 0 → no mount.
 */
export function toTemplateBody(i: SaveTemplateInput, update: boolean): Record<string, unknown> {
  const b: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => {
    if (v !== null && v !== undefined) b[k] = v;
  };
  set('name', i.name);
  set('image', i.imageName);
  set('args', i.dockerArgs);
  set('disk', i.containerDiskInGb);
  set('serverless', i.isServerless);
  set('public', i.isPublic);
  set('readme', i.readme);
  set('category', str(i.category));
  set('startSsh', i.startSsh);
  set('startJupyter', i.startJupyter);
  if (i.ports !== null && i.ports !== undefined) set('ports', parsePorts(i.ports) ?? (update ? [] : undefined));
  if (i.env !== null && i.env !== undefined) set('env', envObject(i.env) ?? (update ? {} : undefined));
  if (i.containerRegistryAuthId !== null && i.containerRegistryAuthId !== undefined)
    set('registry', str(i.containerRegistryAuthId) ?? (update ? null : undefined));
  if (i.volumeInGb !== null && i.volumeInGb !== undefined) {
    if (i.volumeInGb !== 0) b.mounts = { persistent: { size: i.volumeInGb, path: str(i.volumeMountPath) ?? DEFAULT_VOLUME_PATH } };
    else if (update) b.mounts = {};
  }
  return b;
}

export const templateFields = {
  imageName: (t: TemplateRecord) => t.image,
  dockerArgs: (t: TemplateRecord) => t.args,
  containerDiskInGb: (t: TemplateRecord) => t.disk,
  volumeInGb: (t: TemplateRecord) => t.mounts.persistent?.size ?? 0,
  volumeMountPath: (t: TemplateRecord) => t.mounts.persistent?.path ?? null,
  ports: (t: TemplateRecord) => t.ports.join(','),
  portsConfig: () => [],
  env: (t: TemplateRecord) => Object.entries(t.env).map(([key, value]) => ({ key, value })),
  containerRegistryAuthId: (t: TemplateRecord) => t.registry,
  isServerless: (t: TemplateRecord) => t.serverless,
  isPublic: (t: TemplateRecord) => t.public,
  // the platform's own templates do not exist on this fleet
  isRunpod: () => false,
  startScript: () => null,
  advancedStart: () => false,
};

interface PodTemplateFilter {
  isRunpod?: boolean | null;
  isServerless?: boolean | null;
  isPublic?: boolean | null;
}

export const templateResolvers = {
  Query: {
    podTemplates: async (_: unknown, { input }: { input?: PodTemplateFilter | null }, ctx: GqlContext) => {
      if (input?.isRunpod) return [];
      const list = await ctx.services.templates.list(ctx.principal, { includePublic: input?.isPublic === true });
      return list.filter(
        (t) => (input?.isServerless == null || t.serverless === input.isServerless) && (input?.isPublic == null || t.public === input.isPublic),
      );
    },
    podTemplate: (_: unknown, { id }: { id: string }, ctx: GqlContext) => ctx.services.templates.get(ctx.principal, id),
  },
  User: {
    podTemplates: (_: unknown, _a: unknown, ctx: GqlContext) => ctx.services.templates.list(ctx.principal),
  },
  Mutation: {
    saveTemplate: (_: unknown, { input }: { input?: SaveTemplateInput | null }, ctx: GqlContext) => {
      const i = input ?? {};
      const id = str(i.id);
      return id === undefined
        ? ctx.services.templates.create(ctx.principal, toTemplateBody(i, false))
        : ctx.services.templates.update(ctx.principal, id, toTemplateBody(i, true));
    },
    /** The platform deletes by name; an id works too. Returns null. */
    deleteTemplate: async (_: unknown, args: { templateName?: string | null; templateId?: string | null }, ctx: GqlContext) => {
      let id = str(args.templateId);
      const name = str(args.templateName);
      if (id === undefined && name === undefined) fail422('template', ['$.templateName: is required (or templateId)']);
      if (id === undefined) id = (await ctx.services.templates.list(ctx.principal, { name }))[0]?.id;
      if (id === undefined) throw new GpufleetError('NOT_FOUND', `Template ${name} was not found.`);
      await ctx.services.templates.delete(ctx.principal, id);
      return null;
    },
  },
  PodTemplate: templateFields,
};
