// Checks a submission and fills the policy defaults. Routes check payload sizes and the webhook
// address; the rules of a job itself live here, so every caller gets the same answer. Both queues
// turn a checked request into the job's fixed fields with `submission`.
import { randomUUID } from 'node:crypto';
import { GpufleetError } from '../../model/index.ts';
import { JOB_LIMITS, type EnqueueRequest, type JobPolicy } from '../../model/index.ts';
import type { SubmittedJob } from './log-record.ts';

function inRange(v: unknown, lim: { min: number; max: number }): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= lim.min && v <= lim.max;
}

export function validateEnqueue(req: EnqueueRequest): JobPolicy {
  const errors: string[] = [];
  if (typeof req.endpointId !== 'string' || req.endpointId === '') errors.push('$.endpointId: must be a non-empty string');
  if (typeof req.accountId !== 'string' || req.accountId === '') errors.push('$.accountId: must be a non-empty string');
  if (req.input === undefined) errors.push('$.input: is required');
  if (req.webhook !== undefined && (typeof req.webhook !== 'string' || req.webhook === '')) errors.push('$.webhook: must be a URL');
  const p = req.policy ?? {};
  const policy: JobPolicy = {
    executionTimeout: p.executionTimeout ?? JOB_LIMITS.executionTimeout.default,
    ttl: p.ttl ?? JOB_LIMITS.ttl.default,
    lowPriority: p.lowPriority ?? false,
  };
  for (const key of ['executionTimeout', 'ttl'] as const) {
    const lim = JOB_LIMITS[key];
    if (!inRange(policy[key], lim)) errors.push(`$.policy.${key}: must be an integer number of milliseconds from ${lim.min} to ${lim.max}`);
  }
  if (typeof policy.lowPriority !== 'boolean') errors.push('$.policy.lowPriority: must be a boolean');
  if (errors.length > 0) throw new GpufleetError('VALIDATION_FAILED', 'the job request is not valid', { errors });
  return Object.freeze(policy);
}

/** the fields a job is submitted with: a new id (`sync-` for runsync), the request's, the checked policy */
export function submission(req: EnqueueRequest, policy: JobPolicy, createdAt: number): SubmittedJob {
  return {
    id: `${req.sync ? 'sync-' : ''}${randomUUID()}`,
    endpointId: req.endpointId,
    accountId: req.accountId,
    input: req.input,
    ...(req.webhook !== undefined ? { webhook: req.webhook } : {}),
    ...(req.s3Config !== undefined ? { s3Config: req.s3Config } : {}),
    policy,
    sync: req.sync,
    createdAt,
  };
}
