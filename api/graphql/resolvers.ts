// All resolvers, merged per type. Every mutation first checks the key's scope: the /graphql route
// admits `read` keys (queries), so the write check lives here, once, for every mutation.
import { endpointResolvers } from './endpoints.ts';
import { gpuResolvers } from './gpus.ts';
import { podResolvers } from './pods.ts';
import { registryResolvers } from './registries.ts';
import { templateResolvers } from './templates.ts';
import { userResolvers } from './user.ts';
import { requireWrite, type GqlContext } from './context.ts';

type Fn = (parent: unknown, args: unknown, ctx: GqlContext, info: unknown) => unknown;
type ResolverTree = Record<string, Record<string, unknown>>;

export function buildResolvers(): ResolverTree {
  const parts: ResolverTree[] = [podResolvers, gpuResolvers, userResolvers, templateResolvers, endpointResolvers, registryResolvers];
  const merged: ResolverTree = {};
  for (const part of parts)
    for (const [type, fields] of Object.entries(part)) {
      const into = (merged[type] ??= {});
      for (const [name, fn] of Object.entries(fields)) {
        if (name in into) throw new Error(`GraphQL resolver ${type}.${name} is defined twice`);
        into[name] = fn;
      }
    }
  for (const [name, fn] of Object.entries(merged.Mutation ?? {}))
    merged.Mutation![name] = (parent: unknown, args: unknown, ctx: GqlContext, info: unknown) => {
      requireWrite(ctx);
      return (fn as Fn)(parent, args, ctx, info);
    };
  return merged;
}
