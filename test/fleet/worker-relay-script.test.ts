// The host side of the worker relay (fleet/worker-relay-script.ts) run as the host runs it (`sh -c`,
// as root, with this machine's Docker engine and its docker-proxy), fed on stdin as the control plane
// feeds it. The fault: a half-open SSH connection, where the control plane is gone but stdin never
// ends. The heartbeat stops, and the proxy must not keep the relay port.
import { spawn } from 'node:child_process';
import { expect, test } from 'vitest';
import { workerRelayScript } from '../../fleet/index.ts';
import { freePort } from '../harness/free-port.ts';
import { waitFor } from '../harness/wait-for.ts';

test('with stdin open but no heartbeat for heartbeatTimeoutS, the script stops docker-proxy; while heartbeats come it keeps it', async () => {
  const listenPort = await freePort();
  const child = spawn('sh', ['-c', workerRelayScript({ listenPort, forwardPort: await freePort(), heartbeatTimeoutS: 2 })], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  let beats: NodeJS.Timeout | undefined = setInterval(() => child.stdin.write('\n'), 500);
  try {
    await waitFor('docker-proxy listening', async () => /^gateway \S+\n0/m.test(out) || /^error/m.test(out) || undefined, 20_000, 50);
    expect(out).not.toMatch(/^error/m);
    // heartbeats for twice the timeout: the proxy stays
    await new Promise((r) => setTimeout(r, 4_000));
    expect(out).not.toMatch(/^exit/m);
    // the control plane goes silent without closing stdin (the half-open drop)
    clearInterval(beats);
    beats = undefined;
    // (stdin is not ended: only the heartbeat stops)
    const silentAt = Date.now();
    await waitFor('docker-proxy stopped', async () => /^exit /m.test(out), 15_000, 50);
    expect(Date.now() - silentAt).toBeGreaterThanOrEqual(1_500);
  } finally {
    if (beats) clearInterval(beats);
    child.stdin.end();
    if (child.exitCode === null) child.kill();
  }
}, 60_000);
