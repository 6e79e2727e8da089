// SIGINT (Ctrl-C) and SIGTERM while `apply` or `destroy` runs: the engine is told through an
// AbortSignal, gives up where it is and releases the stack lock (provider/engine/run.ts), then the
// command exits 130 or 143 as a shell would report the signal. A second signal exits at once; so does
// the first when nothing answers it within RELEASE_WAIT_MS (the lease then expires by itself).
const EXIT_CODE: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };
const RELEASE_WAIT_MS = 10_000;

export interface Interruption {
  signal: AbortSignal;
  /** the exit code of the signal received, null while none was */
  exitCode(): number | null;
  dispose(): void;
}

export function watchInterrupts(): Interruption {
  const controller = new AbortController();
  let code: number | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    if (code !== null) process.exit(code);
    code = EXIT_CODE[sig] ?? 1;
    controller.abort(sig);
    const exitCode = code;
    setTimeout(() => process.exit(exitCode), RELEASE_WAIT_MS).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    exitCode: () => code,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
