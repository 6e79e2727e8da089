// POST /v2/pods/{id}/ports/{port}/link: a short-lived signed link that opens one of the pod's HTTP
// ports in a browser, on the proxy domain (docs/connect.md, "Signed links"). The proxy host itself is
// served by gateway/pod-ports.ts.
import type { FastifyInstance } from 'fastify';
import { GpufleetError } from '../../model/index.ts';
import { linkPath, type PortAccess } from '../../core/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import { bodyCheck, errorResponses, type RestTypeProvider } from './route-schema.ts';

const PORT_PARAM = /^[1-9][0-9]{0,4}$/;

export function podPortRoutes(fastify: FastifyInstance, access: PortAccess): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.post(
    '/v2/pods/:id/ports/:port/link',
    {
      config: { scope: 'read_write' },
      schema: {
        tags: ['pods'],
        summary: "A signed link (good 60 s) that opens one of the pod's HTTP ports in a browser, on the proxy domain",
        params: { type: 'object', required: ['id', 'port'], properties: { id: { type: 'string' }, port: { type: 'string', description: 'a port number, 1 to 65535 (checked below, with its own message)' } } },
        // checked by the service's own rule, with its messages (linkPath)
        body: bodyCheck({ type: 'object', additionalProperties: false, properties: { path: { type: 'string', description: 'where on the port the link leads; default /' } } }, linkPath),
        response: {
          201: { type: 'object', required: ['url', 'expiresAt'], properties: { url: { type: 'string', format: 'uri' }, expiresAt: { type: 'string', format: 'date-time' } } },
          ...errorResponses(401, 403, 404, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const { id, port } = request.params;
      if (!PORT_PARAM.test(port) || Number(port) > 65535)
        throw new GpufleetError('VALIDATION_FAILED', 'port is a port number from 1 to 65535.', { errors: ['$.port: must be an integer from 1 to 65535'] });
      const link = await access.issueLink(principalOf(request), id, Number(port), request.body);
      return reply.code(201).header('cache-control', 'no-store').send(link);
    },
  );
}
