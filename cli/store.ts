// `gpufleet store check|repair`: the embedded store's data directory, read directly (run them while
// the control plane is stopped). check exits 0 when the store is clean, 2 when only a torn last
// journal record is there (start cuts it by itself), 1 when start would refuse; repair is the one
// explicit way past damage, and says everything it does (docs/store.md).
import path from 'node:path';
import { Command } from 'commander';
import type { SetAside, StoreReport } from '../store/index.ts';

interface StoreOptions {
  dataDir?: string;
  json?: boolean;
}

const EXIT = { clean: 0, damaged: 1, 'torn-tail': 2 } as const;

function dataDirOf(o: StoreOptions): string {
  return path.resolve(o.dataDir ?? process.env.GPUFLEET_DATA_DIR ?? './data');
}

function describeStep(s: SetAside): string {
  return s.keepBytes > 0
    ? `${s.file}: lines ${s.fromLine}–${s.fromLine + s.lines - 1} cut off (the whole file is first copied to ${s.aside})`
    : `${s.file}: all ${s.lines} lines moved to ${s.aside}`;
}

function describe(r: StoreReport): string[] {
  const out = [`data directory ${r.dataDir}`];
  out.push(
    'error' in r.snapshot
      ? `snapshot  ${r.snapshot.file}: UNREADABLE (${r.snapshot.error})`
      : `snapshot  ${r.snapshot.file}: seq ${r.snapshot.seq}, ${r.snapshot.records} records`,
  );
  const j = r.journal;
  out.push(
    `journal   ${j.segments} segment(s), ${j.records} intact record(s)` +
      (j.firstSeq !== null ? ` (seq ${j.firstSeq}–${j.lastSeq})` : '') +
      (j.legacyRecords > 0 ? `, ${j.legacyRecords} in the older unchecked format` : ''),
  );
  if (r.damage) {
    const d = r.damage;
    out.push(`damage    ${d.file}:${d.line}: ${d.reason}`);
    out.push(
      d.tail
        ? '          this is a torn last record (a crash during an append); start cuts it off by itself'
        : '          start refuses to open this store until it is repaired',
    );
    out.push(`repair    keeps every record through seq ${r.keepsThroughSeq ?? '?'} and sets aside:`);
    for (const s of r.repair) out.push(`            ${describeStep(s)}`);
  }
  for (const p of r.problems) out.push(`problem   ${p}`);
  for (const p of r.looseModes) out.push(`mode      readable by others: ${p} (start narrows it to owner-only)`);
  out.push(`status    ${r.status}`);
  return out;
}

/** errors of the registry end the command with their message and exit 1, not a stack trace */
function reported(fn: (o: StoreOptions) => Promise<void>): (o: StoreOptions) => Promise<void> {
  return async (o) => {
    try {
      await fn(o);
    } catch (e) {
      const { isGpufleetError } = await import('../model/index.ts');
      if (!isGpufleetError(e)) throw e;
      process.stderr.write(`error: ${e.message}\n`);
      process.exitCode = 1;
    }
  };
}

export function storeCommand(): Command {
  const store = new Command('store').description("the embedded store's data directory (run while the control plane is stopped)");
  store
    .command('check')
    .description('report damage in the snapshot and journal; exit 0 clean, 2 torn last record only, 1 damaged')
    .option('--data-dir <dir>', 'the data directory (default: GPUFLEET_DATA_DIR or ./data)')
    .option('--json', 'print JSON')
    .action(
      reported(async (o) => {
        const { checkStore } = await import('../store/index.ts');
        const report = await checkStore(dataDirOf(o));
        console.log(o.json ? JSON.stringify(report, null, 2) : describe(report).join('\n'));
        process.exitCode = EXIT[report.status];
      }),
    );
  store
    .command('repair')
    .description('keep the records before the first damaged one; move the damaged segment and later ones aside as .corrupt files')
    .option('--data-dir <dir>', 'the data directory (default: GPUFLEET_DATA_DIR or ./data)')
    .option('--json', 'print JSON')
    .action(
      reported(async (o) => {
        const { repairStore } = await import('../store/index.ts');
        const { before, done, after } = await repairStore(dataDirOf(o));
        if (o.json) console.log(JSON.stringify({ before, done, after }, null, 2));
        else {
          console.log(describe(before).join('\n'));
          console.log(done.length === 0 ? '\nnothing to repair' : `\nrepaired:\n${done.map((s) => `  ${describeStep(s)}`).join('\n')}`);
          console.log(`now: ${after.status}${after.problems.length > 0 ? ` (${after.problems.join('; ')})` : ''}`);
        }
        process.exitCode = EXIT[after.status];
      }),
    );
  return store;
}
