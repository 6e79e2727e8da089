// The client side of GET /v2/pods/{id}/ssh/tunnel (docs/connect.md): a WebSocket whose binary frames
// are the bytes to and from the pod's port 22, as a Duplex stream (ws's own, with back-pressure).
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type * as Ws from 'ws';
import type { ApiClient } from './api-client.ts';
import { rejectOnRefusal } from './pod-exec-socket.ts';

const requireCjs = createRequire(import.meta.url);

export function openSshTunnel(client: ApiClient, podId: string): Promise<Duplex> {
  const ws = client.webSocket(`/v2/pods/${encodeURIComponent(podId)}/ssh/tunnel`);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve((requireCjs('ws') as typeof Ws).createWebSocketStream(ws)));
    rejectOnRefusal(ws, reject);
    ws.once('error', (e) => reject(e));
  });
}
