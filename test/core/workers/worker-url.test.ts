// GPUFLEET_WORKER_URL (an interface point, docs/serverless.md): read from the environment, the default
// derived from the control plane's port, the worker relay that serves it on a loopback-only control
// plane, and a warning when the default cannot work.
import { expect, test } from 'vitest';
import { configFromEnv, configWarnings, workerOrigin, workerRelayPortWarning, workerRelayWanted } from '../../../core/index.ts';
import { nextSteps } from '../../../cli/serve.ts';

test('GPUFLEET_WORKER_URL is the origin workers call; unset, it is host.docker.internal at the control plane port', () => {
  expect(workerOrigin(configFromEnv({ GPUFLEET_WORKER_URL: 'https://cp.example:8443/' }))).toBe('https://cp.example:8443');
  expect(workerOrigin(configFromEnv({ PORT: '9090' }))).toBe('http://host.docker.internal:9090');
  expect(configFromEnv({ GPUFLEET_WORKER_URL: '' }).workerUrl).toBeUndefined();
});

test('on a loopback-only control plane the default URL is served by the worker relay; with the relay off it is warned about, and a malformed URL too', () => {
  expect(workerRelayWanted(configFromEnv({ HOST: '127.0.0.1' }))).toBe(true);
  expect(workerRelayWanted(configFromEnv({}))).toBe(true); // npm start's defaults
  expect(workerRelayWanted(configFromEnv({ HOST: '::1' }))).toBe(true);
  expect(workerRelayWanted(configFromEnv({ HOST: '0.0.0.0' }))).toBe(false);
  expect(workerRelayWanted(configFromEnv({ HOST: '0.0.0.0', GPUFLEET_WORKER_RELAY: 'on' }))).toBe(true);
  expect(workerRelayWanted(configFromEnv({ HOST: '127.0.0.1', GPUFLEET_WORKER_RELAY: 'off' }))).toBe(false);
  // GPUFLEET_WORKER_URL keeps its meaning: workers call it, and no relay runs
  expect(workerRelayWanted(configFromEnv({ HOST: '127.0.0.1', GPUFLEET_WORKER_URL: 'http://10.0.0.5:8080' }))).toBe(false);
  expect(workerRelayWanted(configFromEnv({ GPUFLEET_WORKER_URL: 'http://10.0.0.5:8080', GPUFLEET_WORKER_RELAY: 'on' }))).toBe(false);
  expect(configWarnings(configFromEnv({ HOST: '127.0.0.1' })).some((w) => w.includes('GPUFLEET_WORKER_URL'))).toBe(false);
  const off = configWarnings(configFromEnv({ HOST: '127.0.0.1', GPUFLEET_WORKER_RELAY: 'off' }));
  expect(off.some((w) => w.startsWith('GPUFLEET_WORKER_URL is not set, so serverless workers call http://host.docker.internal:8080'))).toBe(true);
  expect(configWarnings(configFromEnv({ HOST: '0.0.0.0' })).some((w) => w.includes('GPUFLEET_WORKER_URL'))).toBe(false);
  expect(configWarnings(configFromEnv({ HOST: '127.0.0.1', GPUFLEET_WORKER_URL: 'http://10.0.0.5:8080' })).some((w) => w.includes('GPUFLEET_WORKER_URL'))).toBe(false);
  expect(configWarnings(configFromEnv({ HOST: '0.0.0.0', GPUFLEET_WORKER_URL: 'cp.example:8080' })).some((w) => w.includes('is not an http(s) origin'))).toBe(true);
  expect(() => configFromEnv({ GPUFLEET_WORKER_RELAY: 'yes' })).toThrow('GPUFLEET_WORKER_RELAY=yes is not understood');
  expect(configFromEnv({ GPUFLEET_WORKER_RELAY: '' }).workerRelay).toBeUndefined();
});

test("with the relay wanted, a PORT among the hosts' ephemeral ports (where Docker picks pods' published ports) is warned about at start, in the log and the start message", () => {
  const relayWarning = (env: Record<string, string>) => configWarnings(configFromEnv(env)).find((w) => w.includes("ephemeral port range"));
  expect(relayWarning({ HOST: '127.0.0.1', PORT: '40000' })).toMatch(/^PORT=40000 lies in the hosts' ephemeral port range \(32768-60999\).*a tenant's pod given port 40000/);
  expect(relayWarning({ HOST: '127.0.0.1', PORT: '32768' })).toBeDefined();
  expect(relayWarning({ HOST: '127.0.0.1', PORT: '60999' })).toBeDefined();
  expect(relayWarning({ HOST: '127.0.0.1', PORT: '32767' })).toBeUndefined();
  expect(relayWarning({ HOST: '127.0.0.1', PORT: '61000' })).toBeUndefined();
  expect(relayWarning({ HOST: '127.0.0.1' })).toBeUndefined(); // 8080
  expect(relayWarning({ HOST: '0.0.0.0', PORT: '40000', GPUFLEET_WORKER_RELAY: 'on' })).toBeDefined();
  // no relay, nothing to capture
  expect(relayWarning({ HOST: '127.0.0.1', PORT: '40000', GPUFLEET_WORKER_RELAY: 'off' })).toBeUndefined();
  expect(relayWarning({ HOST: '0.0.0.0', PORT: '40000' })).toBeUndefined();
  expect(relayWarning({ HOST: '127.0.0.1', PORT: '40000', GPUFLEET_WORKER_URL: 'http://10.0.0.5:40000' })).toBeUndefined();
  // the start message npm start prints carries it too
  const config = configFromEnv({ HOST: '127.0.0.1', PORT: '40000' });
  expect(nextSteps('http://127.0.0.1:40000', false, workerRelayPortWarning(config))).toContain(`Warning: ${relayWarning({ HOST: '127.0.0.1', PORT: '40000' })}`);
  expect(nextSteps('http://127.0.0.1:8080', false, workerRelayPortWarning(configFromEnv({ HOST: '127.0.0.1' })))).not.toContain('Warning');
});
