// Pod queries and mutations: thin adapters over PodService, the same methods REST calls.
import { fail400, validateBid } from '../../model/index.ts';
import type { PodRecord } from '../../model/index.ts';
import { required, type GqlContext } from './context.ts';
import { podFields } from './pod-fields.ts';
import { toPodCreate, type GqlPodInput, type GqlPodKind } from './pod-input.ts';
import { isInterruptible } from '../../model/index.ts';

interface PodIdArgs {
  input?: { podId: string; gpuCount?: number | null; bidPerGpu?: number | null } | null;
}

/** The public platform's answer to podResume on a spot pod (runpodctl issue #156). */
export const SPOT_RESUME_REFUSED = 'Cannot resume a spot pod as an on demand pod.';

/** A pod resumes with the GPUs it was created with; gpuCount may only repeat that number. */
function checkGpuCount(pod: PodRecord, gpuCount: number | null | undefined): void {
  if (pod.gpu && gpuCount !== null && gpuCount !== undefined && gpuCount !== pod.gpu.count)
    fail400(`Pod ${pod.id} has ${pod.gpu.count} GPU(s); this fleet resumes a pod with the GPU count it was created with, not ${gpuCount}.`, [
      `$.input.gpuCount: must be ${pod.gpu.count} (or omitted)`,
    ]);
}

async function create(ctx: GqlContext, input: GqlPodInput | null | undefined, kind: GqlPodKind): Promise<PodRecord> {
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
    podRentInterruptable: (_: unknown, { input }: { input?: GqlPodInput | null }, ctx: GqlContext) => create(ctx, input, 'spot'),

    /** Start on demand; a spot pod is refused as on the public platform (it resumes with podBidResume). */
    podResume: async (_: unknown, { input }: PodIdArgs, ctx: GqlContext) => {
      const { podId, gpuCount } = required(input);
      const pod = await ctx.services.pods.get(ctx.principal, podId);
      if (isInterruptible(pod)) fail400(SPOT_RESUME_REFUSED, ['$.input.podId: an interruptible pod resumes with podBidResume']);
      checkGpuCount(pod, gpuCount);
      return ctx.services.pods.applyAction(ctx.principal, podId, 'start');
    },
    /** Start a stopped (or preempted) spot pod at a bid (docs/teams.md). */
    podBidResume: async (_: unknown, { input }: PodIdArgs, ctx: GqlContext) => {
      const { podId, gpuCount } = required(input);
      const pod = await ctx.services.pods.get(ctx.principal, podId);
      const bidPerGpu = validateBid({ bidPerGpu: required(input).bidPerGpu ?? undefined }, 'podBidResume input');
      checkGpuCount(pod, gpuCount);
      return ctx.services.pods.applyAction(ctx.principal, podId, 'start', { bidPerGpu });
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
