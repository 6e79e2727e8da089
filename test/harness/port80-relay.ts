// Port 80 of a loopback address of its own, relayed to a server (the control plane): a browser opens
// a pod port's URL as the API gives it (no port: `http://<pod id>-<port>.<proxy domain>/`), its
// wildcard name mapped to that address by Chromium's --host-resolver-rules (proxyResolverRule).
// Binding port 80 needs root, which the test machines have.
import { connect, createServer, type Server } from 'node:net';

export interface Port80Relay {
  address: string;
  server: Server;
  close(): Promise<void>;
}

/** a relay from <127.0.0.x>:80 to `target` (an http://host:port URL), read when each connection comes */
export async function port80Relay(target: () => string): Promise<Port80Relay> {
  for (let i = 0; i < 20; i++) {
    const address = `127.0.0.${100 + Math.floor(Math.random() * 150)}`;
    const server = createServer((sock) => {
      const to = new URL(target());
      const up = connect(Number(to.port), to.hostname);
      sock.pipe(up).pipe(sock);
      const end = () => (sock.destroy(), up.destroy());
      sock.on('error', end).on('close', end);
      up.on('error', end).on('close', end);
    });
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(80, address, () => resolve(true));
    });
    if (ok) return { address, server, close: () => new Promise<void>((r) => server.close(() => r())) };
  }
  throw new Error('no loopback address with a free port 80');
}

/** Chromium's flag that sends every name under `domain` to the relay */
export const proxyResolverRule = (domain: string, relay: Port80Relay): string => `--host-resolver-rules=MAP *.${domain} ${relay.address}`;
