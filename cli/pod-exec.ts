// `gpufleet pods exec <id> -- <argv…>`: an interactive session in a pod's container, over client/'s
// PodExecSocket (docs/pods.md, "Interactive exec").
import { ApiClient, PodsApi } from '../client/index.ts';

const api = () => new PodsApi(new ApiClient());

/**
 * One interactive session (GET /v2/pods/{id}/exec/ws, docs/pods.md "Interactive exec"). With stdin
 * and stdout on a terminal: a terminal in the pod too, this one in raw mode (Ctrl-C and Ctrl-D go
 * to the command), resized with it (SIGWINCH). Otherwise stdin is piped to the command until EOF,
 * stdout and stderr come apart, and Ctrl-C leaves (130). Answers the exit code to exit with.
 */
export async function execSession(id: string, argv: string[]): Promise<number> {
  const stdin = process.stdin;
  const tty = stdin.isTTY === true && process.stdout.isTTY === true;
  const size = () => ({ cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 });
  const session = await api().execSession(id, argv, tty ? { tty: true, ...size() } : {}, {
    stdout: (d) => process.stdout.write(d),
    stderr: (d) => process.stderr.write(d),
  });
  let interrupted = false;
  const onData = (d: Buffer) => session.write(d);
  const onEnd = () => session.endInput();
  const onResize = () => {
    const { cols, rows } = size();
    session.resize(cols, rows);
  };
  const onSigint = () => {
    interrupted = true;
    session.close();
  };
  if (tty) {
    stdin.setRawMode(true);
    process.on('SIGWINCH', onResize);
  } else process.on('SIGINT', onSigint);
  stdin.on('data', onData);
  stdin.on('end', onEnd);
  stdin.resume();
  try {
    const end = await session.ended;
    if (end.code !== null) return end.code;
    if (interrupted) return 130;
    process.stderr.write(`error: the session ended before the command did (${end.reason})\n`);
    return 1;
  } finally {
    if (tty) stdin.setRawMode(false);
    process.off('SIGWINCH', onResize);
    process.off('SIGINT', onSigint);
    stdin.off('data', onData);
    stdin.off('end', onEnd);
    stdin.pause();
    // a terminal's or a pipe's read keeps the process alive otherwise
    stdin.destroy();
  }
}
