// POST /v2/pods/{id}/exec: runs `{"command": [argv…]}` in the pod's container and streams its output
// as server-sent events (docs/pods.md, "Exec"): `output` events `{stream, text}` as the command
// writes, then one `exit` event `{code}`. The body's rules (model/schemas/pod-exec.ts) and who may
// and when are core's (core/pods/exec); this file writes the events.
import type { FastifyInstance } from 'fastify';
import type { PodExecService } from '../../core/index.ts';
import { GpufleetError, isGpufleetError, podExecSchema } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { toProblem } from '../errors/problem.ts';
import { docSchema, errorResponses, idParams, type RestTypeProvider } from './route-schema.ts';
import { openSse } from './sse.ts';

export function podExecRoutes(fastify: FastifyInstance, podExec: PodExecService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/pods/:id/exec',
    {
      config: { scope: 'read_write', held: 'exec' },
      schema: {
        tags: ['pods'],
        summary: "Run a command in a pod's container; its output as server-sent events, then its exit code",
        params: idParams,
        body: docSchema(podExecSchema),
        response: { 200: { description: 'text/event-stream', type: 'string' }, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      // every refusal (404, 409, 503) comes before the 200
      const run = await podExec.exec(principalOf(request), id, request.body);
      const sse = openSse(reply);
      sse.onClose(() => run.close());
      void (async () => {
        const decoders = { stdout: new TextDecoder('utf-8'), stderr: new TextDecoder('utf-8') };
        try {
          for await (const c of run.output) {
            if (!(await sse.send({ stream: c.stream, text: decoders[c.stream].decode(c.data, { stream: true }) }, { event: 'output' }))) return;
          }
          const code = await run.exit;
          if (code === null) throw new GpufleetError('UNAVAILABLE', `The connection to the host of pod ${id} was lost while the command ran.`);
          await sse.send({ code }, { event: 'exit' });
        } catch (err) {
          const problem = isGpufleetError(err) ? err : new GpufleetError('INTERNAL', 'Running the command failed; it has been logged.', { cause: err });
          if (problem.status >= 500) request.log.warn({ err, podId: id }, 'pod exec failed');
          await sse.send(toProblem(problem), { event: 'problem' }).catch(() => false);
        } finally {
          sse.end();
          run.close();
        }
      })();
      return reply;
    },
  );
}
