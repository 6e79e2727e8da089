// Media outputs of public models (docs/media.md): GET /v2/media/{key}?signature=… serves the bytes.
// The route is public: the URL's signature is the credential (an API key is neither needed nor read),
// checked in core (MediaService.open): 403 when altered, 410 once expired, 404 when there is nothing.
// One byte range per request (audio and video players seek with them): 206, or 416 past the end.
import type { FastifyInstance } from 'fastify';
import type { MediaService } from '../../core/index.ts';
import { errorResponses, queryByHand, type RestTypeProvider } from './route-schema.ts';

// a key of no object is a 404 and a bad signature a 403, from MediaService.open: nothing here refuses
const params = { type: 'object', required: ['key'], properties: { key: { type: 'string', description: 'at most 64 characters' } } } as const;
/** the object's bytes, in its own content type: no JSON, so no serializer runs */
const bytes = (description: string) => ({ description, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } }) as const;
const query = queryByHand({ type: 'object', properties: { signature: { type: 'string' } } });

export function mediaRoutes(fastify: FastifyInstance, media: MediaService): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  app.get(
    '/v2/media/:key',
    {
      config: { public: true },
      // a HEAD would open the object and never read it
      exposeHeadRoute: false,
      schema: { tags: ['media'], summary: 'A media output, by its signed URL', params, querystring: query, response: { 200: bytes('the whole object'), 206: bytes('the byte range asked for (content-range says which)'), ...errorResponses(403, 404, 410, 416, 429) } },
    },
    async (request, reply) => {
      const m = await media.open(request.params.key, request.query.signature, request.headers.range);
      if (m.range) reply.code(206).header('content-range', `bytes ${m.range.start}-${m.range.end}/${m.total}`);
      return reply
        .header('content-type', m.contentType)
        .header('accept-ranges', 'bytes')
        .header('content-length', String(m.size))
        .header('cache-control', `private, max-age=${m.maxAgeSeconds}`)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('access-control-allow-origin', '*')
        .send(m.body);
    },
  );
}
