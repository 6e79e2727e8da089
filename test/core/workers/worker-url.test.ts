// GPUFLEET_WORKER_URL (an interface point, docs/serverless.md): read from the environment, the default
// derived from the control plane's port, and a warning when the default cannot work.
import { expect, test } from 'vitest';
import { configFromEnv, configWarnings, workerOrigin } from '../../../core/index.ts';

test('GPUFLEET_WORKER_URL is the origin workers call; unset, it is host.docker.internal at the control plane port', () => {
  expect(workerOrigin(configFromEnv({ GPUFLEET_WORKER_URL: 'https://cp.example:8443/' }))).toBe('https://cp.example:8443');
  expect(workerOrigin(configFromEnv({ PORT: '9090' }))).toBe('http://host.docker.internal:9090');
  expect(configFromEnv({ GPUFLEET_WORKER_URL: '' }).workerUrl).toBeUndefined();
});

test('the default on a loopback-only control plane is warned about, and a malformed URL too', () => {
  const loopback = configWarnings(configFromEnv({ HOST: '127.0.0.1' }));
  expect(loopback.some((w) => w.startsWith('GPUFLEET_WORKER_URL is not set, so serverless workers call http://host.docker.internal:8080'))).toBe(true);
  expect(configWarnings(configFromEnv({ HOST: '0.0.0.0' })).some((w) => w.includes('GPUFLEET_WORKER_URL'))).toBe(false);
  expect(configWarnings(configFromEnv({ HOST: '127.0.0.1', GPUFLEET_WORKER_URL: 'http://10.0.0.5:8080' })).some((w) => w.includes('GPUFLEET_WORKER_URL'))).toBe(false);
  expect(configWarnings(configFromEnv({ HOST: '0.0.0.0', GPUFLEET_WORKER_URL: 'cp.example:8080' })).some((w) => w.includes('is not an http(s) origin'))).toBe(true);
});
