// The embedded queue's log, through the RecordLog port of store/ (store/base/record-log.ts; the
// files, their format, group commit and replay are store/'s): this opens it for job records, and
// says its failures in the queue's terms.
import { GpufleetError } from '../../model/index.ts';
import { openRecordLog, type LogReplay, type RecordLog } from '../../store/index.ts';
import { checkLogRecord, type LogRecord } from './log-record.ts';

export type JobLog = RecordLog<LogRecord>;

/** replays the log in `dir` through `onRecord`, then opens it; `onFailure` is told of each failed write */
export function openJobLog(
  dir: string,
  fsync: boolean,
  onRecord: (rec: LogRecord) => void,
  onFailure: (e: GpufleetError) => void,
): Promise<{ log: JobLog; replay: LogReplay }> {
  return openRecordLog<LogRecord>({ dir, fsync, check: checkLogRecord, onRecord, onFailure, writeFailed, corrupt });
}

/** why the log cannot take writes right now (closed, or the last write failed and none succeeded since), or null */
export function logWriteBlocker(log: JobLog): string | null {
  if (log.closed) return 'the job log is closed';
  return log.blocker ? `a job log write failed: ${log.blocker.message}` : null;
}

function writeFailed(cause: unknown, dropped: number): GpufleetError {
  const errno = (cause as NodeJS.ErrnoException | null)?.code;
  return new GpufleetError(
    'JOB_QUEUE_UNAVAILABLE',
    `The job queue could not write to its log (${cause instanceof Error ? cause.message : String(cause)}), so this change was not made. ` +
      'The queue retries with the next change.',
    { cause, fields: { errno: errno ?? null, dropped } },
  );
}

function corrupt(file: string, line: number, reason: string): GpufleetError {
  return new GpufleetError('JOB_LOG_CORRUPT', `job log damaged at ${file}:${line}: ${reason}`, { fields: { file, line, reason } });
}
