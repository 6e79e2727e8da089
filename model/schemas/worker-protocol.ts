// The answers of the worker protocol (runpod-compat.md 3.2, api/jobs/worker-routes.ts), written from
// these schemas: each names every field, in the order the routes build them, so the bytes an
// unmodified runpod-python worker reads are the ones JSON.stringify wrote before.
import { jobS3ConfigSchema } from './job.ts';

/** one job as job-take hands it out (core/jobs/worker-protocol.ts TakenJob): `input` is any JSON */
export const takenJobSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    input: { description: "the handler's input, as it was run (any JSON value)" },
    s3Config: { ...jobS3ConfigSchema, description: "the job's s3Config as its caller sent it, secret included (runpod-python's rp_upload reads it)" },
  },
} as const;

/** job-take-batch: up to batch_size jobs */
export const takenJobsSchema = { type: 'array', items: takenJobSchema } as const;

/** job-stop: the jobs the worker must stop */
export const jobsToStopSchema = { type: 'object', properties: { jobsToStop: { type: 'array', items: { type: 'string' } } } } as const;

/** job-done: the job's id and the status it has now */
export const jobDoneAnswerSchema = { type: 'object', properties: { id: { type: 'string' }, status: { type: 'string' } } } as const;

/** job-stream and ping: `{}` */
export const emptyAnswerSchema = { type: 'object', properties: {}, additionalProperties: false } as const;
