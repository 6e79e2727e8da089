// Pod queries and mutations: thin adapters over PodService, the same methods REST calls.
import { GpufleetError } from '../../model/index.ts';
import { fail400 } from '../../model/index.ts';
import type { PodRecord } from '../../model/index.ts';
import { required, type GqlContext } from './context.ts';
import { podFields } from './pod-fields.ts';
import { toPodCreate, type GqlPodInput } from './pod-input.ts';

interface PodIdArgs {
  input?: { podId: string; gpuCount?: number | null } | null;
}

async function create(ctx: GqlContext, input: GqlPodInput | null | undefined, kind: 'gpu' | 'cpu'): Promise<PodRecord> {
  const { body, options } = await toPodCreate(ctx.services.store, required(input), kind);
  return ctx.services.pods.createWithPlacement(ctx.principal, body, options);
}

export const podResolvers = {
  Query: {
    pod: (_: unknown, { input }: PodIdArgs, ctx: GqlContext) => ctx.services.pods.get(ctx.principal, required(input).podId),
  },
  User: {
    pods: (_: unknown, _a: unknown, ctx: GqlContext) => ctx.services.pods.list(ctx.principal),
  },
  Mutation: {
    podFindAndDeployOnDemand: (_: unknown, { input }: { input?: GqlPodInput | null }, ctx: GqlContext) => create(ctx, input, 'gpu'),
    deployCpuPod: (_: unknown, { input }: { input?: GqlPodInput | null }, ctx: GqlContext) => create(ctx, input, 'cpu'),

    /** Start. A pod resumes with the GPUs it was created with; gpuCount may only repeat that number. */
    podResume: async (_: unknown, { input }: PodIdArgs, ctx: GqlContext) => {
      const { podId, gpuCount } = required(input);
      const pod = await ctx.services.pods.get(ctx.principal, podId);
      if (pod.gpu && gpuCount !== null && gpuCount !== undefined && gpuCount !== pod.gpu.count)
        fail400(`Pod ${podId} has ${pod.gpu.count} GPU(s); this fleet resumes a pod with the GPU count it was created with, not ${gpuCount}.`, [
          `$.input.gpuCount: must be ${pod.gpu.count} (or omitted)`,
        ]);
      return ctx.services.pods.applyAction(ctx.principal, podId, 'start');
    },
    podBidResume: async (_: unknown, { input }: PodIdArgs, ctx: GqlContext) => {
      await ctx.services.pods.get(ctx.principal, required(input).podId);
      throw new GpufleetError('BAD_REQUEST', 'This fleet has no spot market; resume the pod on demand with podResume.');
    },
    podStop: (_: unknown, { input }: PodIdArgs, ctx: GqlContext) => ctx.services.pods.applyAction(ctx.principal, required(input).podId, 'stop'),
    /** Like DELETE /v2/pods/{id}: terminates from any state, a terminated pod again is a no-op. */
    podTerminate: async (_: unknown, { input }: PodIdArgs, ctx: GqlContext) => {
      await ctx.services.pods.delete(ctx.principal, required(input).podId);
      return null;
    },
  },
  Pod: podFields,
};
