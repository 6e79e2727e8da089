// The job interface (`/v2/{endpointId}/run`, …) and the worker protocol (`/v2/{endpointId}/job-take/…`)
// on the API's origin. docs/jobs.md.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../core/index.ts';
import { jobRoutes } from './job-routes.ts';
import { workerRoutes } from './worker-routes.ts';

export async function jobInterface(app: FastifyInstance, services: Pick<Services, 'jobs' | 'workerProtocol'>): Promise<void> {
  jobRoutes(app, services.jobs);
  await workerRoutes(app, services.workerProtocol);
}
