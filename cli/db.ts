// `gpufleet db migrate|import`: the PostgreSQL database of GPUFLEET_DATABASE_URL (docs/postgres.md).
// migrate applies the schema migrations it lacks (start does too, under the same advisory lock);
// import copies an embedded store's data directory into it and checks the counts.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';

interface DbOptions {
  databaseUrl?: string;
  json?: boolean;
}

function urlOf(o: DbOptions): string {
  const url = o.databaseUrl ?? process.env.GPUFLEET_DATABASE_URL;
  if (!url) throw new Error('no database: set GPUFLEET_DATABASE_URL or pass --database-url');
  return url;
}

/** errors end the command with their message and exit 1, not a stack trace */
function reported<O>(fn: (o: O) => Promise<void>): (o: O) => Promise<void> {
  return async (o) => {
    try {
      await fn(o);
    } catch (e) {
      process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    }
  };
}

export function dbCommand(): Command {
  const db = new Command('db').description('the PostgreSQL database of GPUFLEET_DATABASE_URL');
  db.command('migrate')
    .description('apply the schema migrations the database lacks (start applies them too)')
    .option('--database-url <url>', 'default: GPUFLEET_DATABASE_URL')
    .option('--json', 'print JSON')
    .action(
      reported(async (o: DbOptions) => {
        const { migrateDatabase } = await import('../store/index.ts');
        const r = await migrateDatabase(urlOf(o));
        console.log(o.json ? JSON.stringify(r) : r.applied.length > 0 ? `applied ${r.applied.join(', ')}; schema version ${r.version}` : `up to date (schema version ${r.version})`);
      }),
    );
  db.command('import')
    .description("copy an embedded store's data directory into the database (stop the control plane first), checked by counts")
    .requiredOption('--from <dir>', 'the data directory (GPUFLEET_DATA_DIR of the embedded store)')
    .option('--database-url <url>', 'default: GPUFLEET_DATABASE_URL')
    .option('--allow-non-empty', 'merge into a database that already holds records')
    .option('--json', 'print JSON')
    .action(
      reported(async (o: DbOptions & { from: string; allowNonEmpty?: boolean }) => {
        const [{ PgStore, SecretBox, importDataDir }, { parseSecretKey }] = await Promise.all([import('../store/index.ts'), import('../core/index.ts')]);
        const from = path.resolve(o.from);
        const key = parseSecretKey(process.env.GPUFLEET_SECRET_KEY);
        if (!key) throw new Error('GPUFLEET_SECRET_KEY is required: the key every replica will run with (see docs/postgres.md, "Moving an embedded store")');
        // registry passwords, host keys and worker tokens are sealed inside the records by the
        // services: they open on the replicas only if the database's key is the one they were sealed with
        const keyFile = path.join(from, 'secret.key');
        if (existsSync(keyFile) && !readFileSync(keyFile).equals(key))
          throw new Error(`${keyFile} differs from GPUFLEET_SECRET_KEY: run with GPUFLEET_SECRET_KEY=$(base64 -w0 ${keyFile}) so the secrets sealed in it still open`);
        const box = SecretBox.fromKey(key);
        const store = await PgStore.open({ url: urlOf(o), secretBox: box, onNotice: () => undefined });
        try {
          const counts = await importDataDir({ from, store, sourceBox: box, allowNonEmpty: o.allowNonEmpty === true });
          if (o.json) console.log(JSON.stringify({ counts }));
          else {
            for (const c of counts) console.log(`${c.collection.padEnd(16)} ${String(c.source).padStart(7)} in the data directory, ${String(c.imported).padStart(7)} imported`);
            console.log('import checked: every record of the data directory is in the database');
          }
        } finally {
          await store.close();
        }
      }),
    );
  return db;
}
