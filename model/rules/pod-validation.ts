// Request validation for pods, in the order docs/validation.md gives: mount conflicts (400), the
// JSON Schema (422), then field rules the schema cannot say (422).
import { checkCreateMountRules, checkUpdateMountRules } from './mount-rules.ts';
import type { Mounts } from '../records/pod.ts';
import { checkPortRanges } from '../schemas/common.ts';
import {
  bidPerGpuSchema,
  podActionSchema,
  podCreateSchema,
  podUpdateSchema,
  type PodActionInput,
  type PodCreateInput,
  type PodUpdateInput,
} from '../schemas/pod.ts';
import { check, compile, fail422 } from './validation.ts';

const validateCreate = compile<PodCreateInput>(podCreateSchema);
const validateUpdate = compile<PodUpdateInput>(podUpdateSchema);
const validateAction = compile<PodActionInput>(podActionSchema);
const validateBidInput = compile<{ bidPerGpu: number }>({ type: 'object', required: ['bidPerGpu'], properties: { bidPerGpu: bidPerGpuSchema } });

/** A bid given apart from a create (GraphQL podBidResume's `input`): the create's own rule for `bidPerGpu`. */
export function validateBid(input: unknown, what: string): number {
  return check(validateBidInput, input, what).bidPerGpu;
}

export function validatePodCreate(body: unknown): PodCreateInput {
  checkCreateMountRules(body);
  const input = check(validateCreate, body, 'pod');
  const errors = checkPortRanges(input.ports);
  if (input.gpu && input.cpu) errors.push('$: must not have both gpu and cpu');
  errors.push(...interruptibleRules(input));
  if (errors.length) fail422('pod', errors);
  return input;
}

export function validatePodUpdate(body: unknown, existing: Mounts): PodUpdateInput {
  checkUpdateMountRules(body, existing);
  const input = check(validateUpdate, body, 'pod update');
  const errors = checkPortRanges(input.ports);
  if (errors.length) fail422('pod update', errors);
  return input;
}

export function validatePodAction(body: unknown): PodActionInput {
  return check(validateAction, body, 'pod action');
}

/** docs/teams.md "Interruptible pods": a bid belongs to an interruptible GPU pod. */
function interruptibleRules(input: PodCreateInput): string[] {
  const errors: string[] = [];
  if (input.bidPerGpu !== undefined && input.interruptible !== true) errors.push('$.bidPerGpu: only with interruptible: true');
  if (input.interruptible === true && !input.gpu) errors.push('$.interruptible: only GPU pods can be interruptible (give gpu)');
  return errors;
}
