// One long-lived command on an SSH channel, its output handed over as it arrives (SshPool.stream).
// Flow control is SSH's own: pause() stops reading the channel, so its window fills and the host's
// side blocks in write(); nothing piles up here while a slow client catches up.
import type { ClientChannel } from 'ssh2';

export interface StreamHandlers {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
}

export interface SshStream {
  /** settles once the channel has closed: the command's exit code, or null (cut off, or close()) */
  readonly done: Promise<{ code: number | null }>;
  pause(): void;
  resume(): void;
  /**
   * Writes to the command's stdin (interactive exec). False when the channel's window is full (call
   * `onInputDrain` to learn when to write again) or the channel is closed.
   */
  write(data: Buffer): boolean;
  /** `listener` once stdin takes writes again after write() answered false */
  onInputDrain(listener: () => void): void;
  /** Ends the command's stdin (EOF); the channel stays open for its output. */
  endInput(): void;
  /** Tells the channel's terminal its new size (a stream opened with a PTY; nothing otherwise). */
  resize(cols: number, rows: number): void;
  /**
   * Ends the command's stdin and closes the channel. sshd cannot signal the command (see ssh-pool.ts),
   * so a command that must stop when nobody listens watches its stdin for that EOF.
   */
  close(): void;
}

export function openStream(ch: ClientChannel, handlers: StreamHandlers, pty = false): SshStream {
  let closed = false;
  let inputEnded = false;
  const done = new Promise<{ code: number | null }>((resolve) => {
    ch.on('data', (d: Buffer) => handlers.stdout(d));
    ch.stderr.on('data', (d: Buffer) => handlers.stderr(d));
    // after 'data' events still queued, as in SshPool.collect
    ch.on('close', (code: number | null | undefined) => setImmediate(() => resolve({ code: typeof code === 'number' ? code : null })));
  });
  return {
    done,
    pause() {
      ch.pause();
      ch.stderr.pause();
    },
    resume() {
      ch.resume();
      ch.stderr.resume();
    },
    write(data) {
      if (closed || inputEnded) return false;
      return ch.write(data);
    },
    onInputDrain(listener) {
      ch.once('drain', listener);
    },
    endInput() {
      if (closed || inputEnded) return;
      inputEnded = true;
      ch.end();
    },
    resize(cols, rows) {
      if (!closed && pty) ch.setWindow(rows, cols, 0, 0);
    },
    close() {
      if (closed) return;
      closed = true;
      if (!inputEnded) ch.end();
      ch.close();
    },
  };
}
