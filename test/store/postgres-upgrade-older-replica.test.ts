// Replicas of an older gpufleet (87b9f54, a real checkout of it: test/harness/older-checkout.ts) and
// the job tables' migration (migration 4, docs/postgres.md "Upgrading"), on the database that version
// wrote (test/fixtures/upgrade/postgres-87b9f54.sql):
// - while an older replica runs on it (its job-queue replica row is fresh), the migration refuses,
//   saying to stop all replicas first, both `gpufleet db migrate` and the new server's start, and
//   changes nothing; once the older replica has stopped, the migration goes through; one SIGKILLed
//   holds the migration off until its leases run out (a few seconds), not longer;
// - an older replica started on the migrated database refuses to start (its store finds a newer
//   schema) and makes no table; its job queue opened on its own refuses too (gpufleet_job_schema says
//   version 2) and makes no table either.
// Skipped, saying so, where the repository lacks the commit (a shallow clone).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrateDatabase } from '../../store/index.ts';
import { ADMIN_KEY, freePort, spawnControlPlane, startTestControlPlane, type SpawnedControlPlane } from '../harness/control-plane.ts';
import { hasCommit, olderCheckout } from '../harness/older-checkout.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { waitFor } from '../harness/wait-for.ts';
import { manifest, OLD_TABLES, one, restoredFixture } from './postgres-upgrade-fixture.ts';

const OLDER = '87b9f54';
const present = await hasCommit(OLDER);
if (!present) console.warn(`skipped: this repository lacks commit ${OLDER} (a shallow clone?); the older replica cannot be checked out`);

let server: TestPostgres;
let older: string;
let dataDir: string;
beforeAll(async () => {
  if (!present) return;
  server = await startPostgres();
  older = (await olderCheckout(OLDER))!;
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-older-'));
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** the older version's server on `url`, as an operator starts it */
async function olderServer(url: string): Promise<SpawnedControlPlane> {
  return spawnControlPlane({
    root: older,
    dataDir,
    port: await freePort(),
    env: { GPUFLEET_DATABASE_URL: url, GPUFLEET_SECRET_KEY: manifest.secretKey, GPUFLEET_BOOTSTRAP_KEY: ADMIN_KEY },
  });
}

/** every table, sequence and index of the database, by name */
async function relations(url: string): Promise<string[]> {
  const c = await one<{ names: string[] }>(url, `SELECT array_agg(relname::text ORDER BY relname) AS names FROM pg_class WHERE relnamespace = 'public'::regnamespace`);
  return c!.names;
}

describe.skipIf(!present)(`replicas of ${OLDER} and the job tables' migration`, () => {
  let url: string;

  test('while a replica of 87b9f54 runs, the migration refuses (db migrate and the new server alike) and changes nothing; once it stopped, it migrates', async () => {
    url = await restoredFixture(server);
    const before = await relations(url);
    const running = await olderServer(url);
    try {
      await waitFor('the older replica joined the job queue', async () => (await one<{ n: number }>(url, 'SELECT count(*)::int AS n FROM gpufleet_job_replicas'))!.n > 0);
      const refusal = /migration 4 \(job tables\) refused: replicas of an older gpufleet still run against this database \(.*job queue replica .+ was seen less than 5 s ago\)\. Stop all replicas, then start the new version/;
      await expect(migrateDatabase(url)).rejects.toThrow(refusal);
      await expect(startTestControlPlane({ config: { databaseUrl: url, secretKey: Buffer.from(manifest.secretKey, 'base64') } })).rejects.toThrow(refusal);
      expect(await one(url, 'SELECT max(version) AS v FROM gf_schema_migrations')).toEqual({ v: 3 });
      expect(await relations(url)).toEqual(before);
      // the older replica was not disturbed: it still answers
      expect((await fetch(`${running.url}/v2/pods/${manifest.podId}`, { headers: { authorization: `Bearer ${manifest.user.key}` } })).status).toBe(200);
    } finally {
      await running.kill('SIGTERM');
    }
    expect(await migrateDatabase(url)).toEqual({ applied: [4, 5], version: 5 });
  });

  test('a replica of 87b9f54 SIGKILLed: the migration refuses while its leases have not run out, and goes through once they have', async () => {
    const db = await restoredFixture(server);
    const killed = await olderServer(db);
    await waitFor('the older replica joined the job queue', async () => (await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM gpufleet_job_replicas'))!.n > 0);
    await killed.kill('SIGKILL');
    const at = Date.now();
    // its rows are still there, fresh: nothing tells a dead replica from a live one but time
    await expect(migrateDatabase(db)).rejects.toThrow(/Stop all replicas, then start the new version \(a replica that was killed: wait until its leases run out/);
    expect(await one(db, 'SELECT max(version) AS v FROM gf_schema_migrations')).toEqual({ v: 3 });
    const done = await waitFor('the migration once the leases ran out', () => migrateDatabase(db).catch(() => undefined), 30_000, 500);
    expect(done).toEqual({ applied: [4, 5], version: 5 });
    // the job queue replica counts as alive for 5 s after its last refresh, host leases last 5 s
    expect(Date.now() - at).toBeGreaterThan(2_000);
  });

  test('a replica of 87b9f54 started on the migrated database refuses to start and makes no table; its job queue alone refuses too', async () => {
    expect(url).toBeDefined();
    const before = await relations(url);
    const started = await olderServer(url).catch((e: unknown) => e);
    if (!(started instanceof Error)) await (started as SpawnedControlPlane).kill('SIGKILL');
    expect(started).toBeInstanceOf(Error);
    expect((started as Error).message).toMatch(/the database's schema is at version 5, newer than this gpufleet knows \(3\): upgrade gpufleet/);
    expect(await relations(url)).toEqual(before);
    for (const t of OLD_TABLES) expect(await one(url, `SELECT to_regclass('${t}')::text AS t`)).toEqual({ t: null });

    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/older-queue-open-child.ts'), older, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => child.on('exit', r));
    expect(out).toContain("REFUSED the job queue's tables are at schema version 2, newer than this gpufleet (1)");
    expect(await relations(url)).toEqual(before);
    expect(await one(url, 'SELECT version FROM gpufleet_job_schema')).toEqual({ version: 2 });
  });
});
