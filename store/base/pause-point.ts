// Named moments a fault test can stop a control plane at: with GPUFLEET_PAUSE_AT=<name> the process
// writes `gpufleet: paused at <name>` to stderr when it reaches that moment and waits there forever,
// for the test to SIGKILL it (test/store/upgrade-embedded.test.ts). Never set outside tests; unset,
// a pause point is one comparison. The names are listed in docs/storage.md.
const PAUSE_AT = process.env.GPUFLEET_PAUSE_AT;

export type PausePoint =
  /** the snapshot's temp file is written and flushed; it is not renamed over the snapshot yet */
  | 'snapshot-temp-written'
  /** start replayed the journal into a new snapshot, committed; the segments it replayed are not deleted yet */
  | 'replayed-journal-kept';

export function pausePoint(name: PausePoint): Promise<void> | undefined {
  if (PAUSE_AT !== name) return undefined;
  process.stderr.write(`gpufleet: paused at ${name}\n`);
  // a promise that never settles does not keep Node alive on its own: the timer does, until the SIGKILL
  return new Promise<void>(() => setInterval(() => undefined, 60_000));
}
