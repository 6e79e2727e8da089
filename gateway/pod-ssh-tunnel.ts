// GET /v2/pods/{id}/ssh/tunnel: a WebSocket whose binary frames are a byte stream to port 22 of the
// pod's container (docs/connect.md, "gpufleet pods ssh"), opened as the pod's HTTP ports are: a
// direct-tcpip channel from its host's SSH connection to the container's address. `gpufleet pods ssh
// <id> --proxy` bridges its stdin and stdout to it, so it serves as ssh's ProxyCommand (scp, rsync,
// VS Code Remote) with no port published. The SSH session inside is end to end between the user's
// client and the pod's sshd: the control plane passes bytes it cannot read. Refusals come before
// the upgrade as problem+json: 401/403 (key), 404 (not the caller's pod), 409 (not RUNNING), 502
// (nothing answers on port 22: the image runs no SSH server).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Duplex } from 'node:stream';
import { createWebSocketStream } from 'ws';
import type { PortAccess } from '../core/index.ts';
import { GpufleetError, type PodRecord, type Principal } from '../model/index.ts';
import { endAnsweredUpgrade } from './upgrade-request.ts';

export interface SshTunnelDeps {
  access: PortAccess;
  principalOf(request: FastifyRequest): Principal;
  /** a byte stream to the pod's container's `port` (over its host's SSH connection) */
  connect(pod: PodRecord, port: number): Promise<Duplex>;
}

export const SSH_TUNNEL_PATH = '/v2/pods/:id/ssh/tunnel';

export function podSshTunnelRoute(app: FastifyInstance, d: SshTunnelDeps): void {
  const channels = new WeakMap<FastifyRequest, Duplex>();
  app.get(
    SSH_TUNNEL_PATH,
    {
      websocket: true,
      config: { scope: 'read_write', held: 'exec' },
      schema: {
        tags: ['pods'],
        summary: "A WebSocket to the pod's port 22 (binary frames are the bytes): `gpufleet pods ssh <id> --proxy` as ssh's ProxyCommand",
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
      },
      onResponse: endAnsweredUpgrade,
      // the channel opens before the upgrade, so a pod without an SSH server is a 502 the client reads
      preHandler: async (request) => {
        if (!request.ws) throw new GpufleetError('BAD_REQUEST', 'This route takes a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket).');
        const { id } = request.params as { id: string };
        const pod = await d.access.sshTarget(d.principalOf(request), id);
        const channel = await d.connect(pod, 22).catch((e: unknown) => {
          throw new GpufleetError('BAD_GATEWAY', `Nothing answers on port 22 of pod ${id} (does its image run an SSH server?): ${(e as Error).message}`, { cause: e });
        });
        channels.set(request, channel);
        // the handler below takes the channel over; when it is never called (the upgrade is refused, as
        // with no Sec-WebSocket-Key, or the caller went away first) the channel ends with the connection
        const socket = request.raw.socket;
        if (socket.destroyed) channel.destroy();
        else
          socket.once('close', () => {
            if (channels.get(request) === channel) channel.destroy();
          });
      },
    },
    (socket, request) => {
      const channel = channels.get(request)!;
      channels.delete(request);
      const stream = createWebSocketStream(socket);
      const end = (): void => {
        stream.destroy();
        channel.destroy();
      };
      for (const s of [stream, channel]) {
        s.once('close', end);
        s.on('error', end);
      }
      stream.pipe(channel);
      channel.pipe(stream);
    },
  );
}
