// Typed calls for an endpoint's jobs (runpod-compat.md 3: `/v2/{endpoint}/run|runsync|status|stream|cancel`).
// Used by `gpufleet jobs`.
import type { ApiClient } from './api-client.ts';

export interface JobStatus {
  id: string;
  status: string;
  output?: unknown;
  error?: unknown;
  stream?: { output: unknown }[];
  [field: string]: unknown;
}

export interface EndpointHealth {
  jobs: { completed: number; failed: number; inProgress: number; inQueue: number; retried: number };
  workers: Record<string, number>;
}

export const FINAL_JOB_STATUSES: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

export class JobsApi {
  constructor(private readonly client: ApiClient) {}

  private base(endpointId: string): string {
    return `/v2/${encodeURIComponent(endpointId)}`;
  }

  run(endpointId: string, input: unknown): Promise<JobStatus> {
    return this.client.post<JobStatus>(`${this.base(endpointId)}/run`, { input });
  }

  /** queues the job and waits up to `waitMs` (the server's bound) for it to end */
  runSync(endpointId: string, input: unknown, waitMs?: number): Promise<JobStatus> {
    return this.client.post<JobStatus>(`${this.base(endpointId)}/runsync${waitMs ? `?wait=${waitMs}` : ''}`, { input });
  }

  status(endpointId: string, jobId: string): Promise<JobStatus> {
    return this.client.get<JobStatus>(`${this.base(endpointId)}/status/${encodeURIComponent(jobId)}`);
  }

  /** stream chunks no earlier call returned, with the job's status */
  stream(endpointId: string, jobId: string): Promise<JobStatus> {
    return this.client.get<JobStatus>(`${this.base(endpointId)}/stream/${encodeURIComponent(jobId)}`);
  }

  cancel(endpointId: string, jobId: string): Promise<JobStatus> {
    return this.client.post<JobStatus>(`${this.base(endpointId)}/cancel/${encodeURIComponent(jobId)}`);
  }

  /** a FAILED or TIMED_OUT job queued again, same id */
  retry(endpointId: string, jobId: string): Promise<JobStatus> {
    return this.client.post<JobStatus>(`${this.base(endpointId)}/retry/${encodeURIComponent(jobId)}`);
  }

  /** the queue's job counts and the workers by state */
  health(endpointId: string): Promise<EndpointHealth> {
    return this.client.get<EndpointHealth>(`${this.base(endpointId)}/health`);
  }
}
