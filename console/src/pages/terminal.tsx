// A terminal in the pod (docs/console.md, "Terminal"): xterm.js (loaded on first use) on an exec
// session with a TTY (client/'s PodExecSocket: a single-use ticket, then the WebSocket), running a
// login shell. The size follows the element (each change is a resize of the pod's terminal), keys go
// to the shell (Ctrl-C included), the exit code shows when it ends, and Reconnect opens a new one.
import { useEffect, useRef, useState } from 'preact/hooks';
import { LOGIN_SHELL, type PodExecSocket } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { messageOf } from '../ui/widgets.tsx';
import type { TerminalView } from '../terminal/xterm-view.ts';

const HINT_ID = 'terminal-keys';

type Phase = 'idle' | 'opening' | 'open' | 'ended';

/** the panel went away while xterm.js loaded: nothing more to open */
class Gone extends Error {}

export function Terminal({ podId }: { podId: string }) {
  const api = useApi();
  const screen = useRef<HTMLDivElement>(null);
  const view = useRef<TerminalView | null>(null);
  const sock = useRef<PodExecSocket | null>(null);
  const [phase, setPhase] = useState<Phase>('idle');
  const [status, setStatus] = useState('');
  const [size, setSize] = useState<{ cols: number; rows: number } | null>(null);
  /** set when the panel goes away: a session or view still being opened then is closed as it arrives */
  const unmounted = useRef(false);
  useEffect(
    () => () => {
      unmounted.current = true;
      sock.current?.close();
      view.current?.dispose();
    },
    [],
  );

  const screenView = async (): Promise<TerminalView> => {
    if (view.current) {
      view.current.reset();
      return view.current;
    }
    const { openTerminalView } = await import('../terminal/xterm-view.ts');
    if (unmounted.current) throw new Gone();
    const v = openTerminalView(screen.current!, HINT_ID);
    v.onData((keys) => sock.current?.write(keys));
    v.onResize((s) => {
      setSize(s);
      sock.current?.resize(s.cols, s.rows);
    });
    view.current = v;
    return v;
  };

  const connect = async () => {
    setPhase('opening');
    setStatus('Opening a shell…');
    try {
      const v = await screenView();
      const asked = { cols: v.cols, rows: v.rows };
      setSize(asked);
      const session = await api.pods.execSession(podId, LOGIN_SHELL, { tty: true, ...asked }, { stdout: (d) => v.write(d), stderr: (d) => v.write(d) });
      if (unmounted.current) {
        // left while it opened: end the shell now rather than at the host's idle timeout
        session.close();
        return;
      }
      sock.current = session;
      // resized while it opened
      if (v.cols !== asked.cols || v.rows !== asked.rows) session.resize(v.cols, v.rows);
      setPhase('open');
      setStatus(`Connected: a shell in pod ${podId}.`);
      v.focus();
      const said = await session.ended.then(
        (end) => (end.code === null ? `Session ended: ${end.reason}.` : `Session ended: exit code ${end.code}.`),
        (e: unknown) => `Session ended: ${messageOf(e)}`,
      );
      if (sock.current === session) sock.current = null;
      v.write(`\r\n[${said}]\r\n`);
      setStatus(said);
      setPhase('ended');
    } catch (e) {
      if (unmounted.current) return;
      setStatus(`Could not open the terminal: ${messageOf(e)}`);
      setPhase('ended');
    }
  };

  return (
    <section aria-label="Terminal" class="terminal-panel">
      <p id={HINT_ID} class="hint">
        Keys go to the shell, Tab and Ctrl-C included. To leave the terminal with the keyboard, press Escape, then Tab.
      </p>
      <div ref={screen} class="terminal-screen" hidden={phase === 'idle'} />
      <div class="row">
        <p role="status" class="grow">
          {status}
        </p>
        {size ? (
          <span class="muted">
            {size.cols} columns × {size.rows} rows
          </span>
        ) : null}
        {phase === 'open' ? (
          <button type="button" onClick={() => sock.current?.close()}>
            Close terminal
          </button>
        ) : (
          <button type="button" class="primary" disabled={phase === 'opening'} onClick={connect}>
            {phase === 'opening' ? 'Opening…' : phase === 'ended' ? 'Reconnect' : 'Open terminal'}
          </button>
        )}
      </div>
    </section>
  );
}
