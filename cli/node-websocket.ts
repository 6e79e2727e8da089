// The CLI's WebSockets (client/ is browser-safe and opens none itself): `ws`, which sends the key
// in the Authorization header. It is read on the first socket (CommonJS, so require() is
// synchronous): most of a WebSocket's load time, and only `pods exec` and `pods ssh` need it, so
// `gpufleet pods list` does not pay for it.
import { createRequire } from 'node:module';
import type * as Ws from 'ws';
import { ApiClient, type WebSocketLike } from '../client/index.ts';

const requireCjs = createRequire(import.meta.url);

/** the `ws` module (its constructor, createWebSocketStream, …) */
export function wsModule(): typeof Ws {
  return requireCjs('ws') as typeof Ws;
}

/** makes every ApiClient of this process open its sockets with `ws` */
export function useNodeWebSockets(): void {
  ApiClient.webSocketFactory ??= (url, headers) => new (wsModule().WebSocket)(url, { headers }) as unknown as WebSocketLike;
}
