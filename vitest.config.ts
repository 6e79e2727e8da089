import { defineConfig } from 'vitest/config';

// Tests boot real servers, sshd test hosts and containers: allow them time, and keep parallelism
// modest so two cores are not oversubscribed.
export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'cdktf.out/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 3,
    pool: 'forks',
    // GPUFLEET_TEST_STORE=postgres (npm run test:postgres): one PostgreSQL cluster for the run
    globalSetup: ['test/harness/postgres-global-setup.ts'],
  },
});
