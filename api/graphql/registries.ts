// Container registry credentials: saveRegistryAuth / updateRegistryAuth / deleteRegistryAuth and
// myself.containerRegistryCreds over RegistryService. Only `{id, name}` ever comes back.
import { fail422 } from '../../model/index.ts';
import { required, str, type GqlContext } from './context.ts';

interface RegistryInput {
  id?: string | null;
  name?: string | null;
  username?: string | null;
  password?: string | null;
}

/** Drop nulls so the service's schema reports missing fields as missing, not as the wrong type. */
function defined(i: RegistryInput, keys: readonly (keyof RegistryInput)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) {
    const v = i[k];
    if (v !== null && v !== undefined) out[k] = v;
  }
  return out;
}

export const registryResolvers = {
  User: {
    containerRegistryCreds: (_: unknown, _a: unknown, ctx: GqlContext) => ctx.services.registries.list(ctx.principal),
  },
  Mutation: {
    saveRegistryAuth: (_: unknown, { input }: { input?: RegistryInput | null }, ctx: GqlContext) =>
      ctx.services.registries.create(ctx.principal, defined(required(input), ['name', 'username', 'password'])),
    updateRegistryAuth: (_: unknown, { input }: { input?: RegistryInput | null }, ctx: GqlContext) => {
      const i = required(input);
      const id = str(i.id);
      if (id === undefined) fail422('registry credential update', ['$.input.id: is required']);
      return ctx.services.registries.update(ctx.principal, id, defined(i, ['username', 'password']));
    },
    deleteRegistryAuth: async (_: unknown, { registryAuthId }: { registryAuthId: string }, ctx: GqlContext) => {
      await ctx.services.registries.delete(ctx.principal, registryAuthId);
      return null;
    },
  },
};
