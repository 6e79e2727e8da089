import { defineConfig } from 'vitest/config';

// Tests boot real servers, sshd test hosts and containers: allow them time, and keep parallelism
// modest so two cores are not oversubscribed.
// the embedded store's own files (journal, snapshot, full disk, a killed process, store check/repair):
// they open it directly whatever the run, so a PostgreSQL run (npm run test:postgres) leaves them out
const EMBEDDED_STORE_FILES = [
  'test/store/lowdb-store.test.ts',
  'test/store/journal-damage.test.ts',
  'test/store/disk-full.test.ts',
  'test/store/sigkill.test.ts',
  'test/cli/store-cli.test.ts',
  'test/store/record-codec.test.ts',
  'test/store/upgrade-embedded.test.ts',
];

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'cdktf.out/**', ...(process.env.GPUFLEET_TEST_STORE === 'postgres' ? EMBEDDED_STORE_FILES : [])],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 3,
    pool: 'forks',
    // one module registry per worker, not per file: importing the product and the harness again for each
    // of ~240 files cost more than a third of the run (vitest's "import" 372 s of 720 s in CI). The rule
    // that makes it safe (docs/testing.md, "One worker, many files"): a test file leaves no module state
    // behind, and a test file imported by another is imported under a query of its own.
    isolate: false,
    // every CLI or `serve` a test spawns runs the sources through tsx: they change between builds, and
    // dist/ is refused when older than them (docs/cli.md). test/cli/dist-cli.test.ts runs dist/ itself.
    env: { GPUFLEET_DEV: '1' },
    // GPUFLEET_TEST_STORE=postgres (npm run test:postgres): one PostgreSQL cluster for the run
    globalSetup: ['test/harness/postgres-global-setup.ts'],
  },
});
