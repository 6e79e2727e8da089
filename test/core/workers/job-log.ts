// Reads the job queue's own log (docs/jobs.md, "Files") for fault tests that check what was recorded:
// e.g. that a job has exactly one final record.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LogRecord } from '../../../core/jobs/log-record.ts';
import { decodeLine } from '../../../store/index.ts';

/** every good record of the snapshots and write-ahead segments under `dataDir/jobs`, in file order */
export async function jobLogRecords(dataDir: string): Promise<LogRecord[]> {
  const dir = path.join(dataDir, 'jobs');
  const out: LogRecord[] = [];
  for (const f of (await readdir(dir)).filter((n) => /^(wal|snap)-.*\.log$/.test(n)).sort()) {
    for (const line of (await readFile(path.join(dir, f))).toString('utf8').split('\n')) {
      if (!line) continue;
      const rec = decodeLine(Buffer.from(line));
      if (rec.ok) out.push(rec.value as LogRecord);
    }
  }
  return out;
}

/** the records naming job `id` */
export async function jobRecords(dataDir: string, id: string): Promise<LogRecord[]> {
  return (await jobLogRecords(dataDir)).filter((r) => ('id' in r && r.id === id) || ((r.t === 'enq' || r.t === 'put') && r.job.id === id));
}
