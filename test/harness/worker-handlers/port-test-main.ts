// The pod port test server (a Jupyter stand-in, test/gateway/): the LB test routes (lb-test-server.ts:
// /echo shows the request headers it received, /sse streams) on PORT (default 8888), a WebSocket
// echo (the `ws` library) on any path of an upgrade, greeting with the path and the Cookie it saw,
// GET /set-cookies and /set-one-cookie (try to set gpufleet's cookie; the latter on an upgrade's 101 too), and GET /page: an HTML page whose script opens a
// WebSocket back to its own origin and prints what came back, as a notebook's kernel channel does.
import { createServer } from 'node:http';
import { WebSocketServer, type RawData } from 'ws';
import { lbTestHandler } from './lb-test-server.ts';

const PAGE = `<!doctype html><title>port test</title><pre id="out">waiting</pre><script>
const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/kernel');
ws.onmessage = (m) => { document.getElementById('out').textContent = m.data; };
ws.onopen = () => ws.send('ping from the page');
ws.onerror = () => { document.getElementById('out').textContent = 'websocket failed'; };
</script>`;

const port = Number(process.env.PORT ?? 8888);
const http = lbTestHandler();
const server = createServer((req, res) => {
  if (req.url === '/set-cookies') {
    // a pod that tries to set the proxy's own cookie beside one of its own
    res.setHeader('set-cookie', ['gpufleet-port=from-the-pod; Path=/', '__Host-gpufleet-port=x; Path=/; Secure', 'mine=1; Path=/']);
    res.end('ok');
    return;
  }
  if (req.url === '/set-one-cookie') {
    // exactly one Set-Cookie line (undici hands a single one over as a string, not an array)
    res.setHeader('set-cookie', '__Host-gpufleet-port=x; Path=/; Secure');
    res.end('ok');
    return;
  }
  if (req.url === '/page') {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(PAGE);
    return;
  }
  http(req, res);
});
const wss = new WebSocketServer({ noServer: true });
// an upgrade to /set-one-cookie answers its 101 with exactly one Set-Cookie of the proxy's own name
wss.on('headers', (headers, req) => {
  if (req.url === '/set-one-cookie') headers.push('Set-Cookie: __Host-gpufleet-port=x; Path=/; Secure');
});
server.on('upgrade', (req, socket, head) => {
  wss.handleUpgrade(req, socket, head, (ws) => {
    let first = true;
    ws.on('message', (data: RawData, binary: boolean) => {
      if (first && !binary) ws.send(JSON.stringify({ path: req.url, cookie: req.headers.cookie ?? null, authorization: req.headers.authorization ?? null, got: String(data) }));
      else ws.send(data, { binary });
      first = false;
    });
  });
});
server.listen(port, '0.0.0.0');
process.on('SIGTERM', () => process.exit(0));
