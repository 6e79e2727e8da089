// The LB test worker image's entry point: lb-test-server.ts on PORT (default 80), and on PORT_HEALTH too
// when that differs.
import { createServer } from 'node:http';
import { lbTestHandler } from './lb-test-server.ts';

const port = Number(process.env.PORT ?? 80);
const health = Number(process.env.PORT_HEALTH ?? port);
const handler = lbTestHandler();
createServer(handler).listen(port, '0.0.0.0');
if (health !== port) createServer(handler).listen(health, '0.0.0.0');
process.on('SIGTERM', () => process.exit(0));
