// A terminal on the pod's exec WebSocket (GET /v2/pods/{id}/exec/ws): `sh` in the container, a line
// at a time. The browser's socket carries the session cookie and the page's Origin (the server checks
// that Origin is the console's own).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PodExecSocket } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { messageOf } from '../ui/widgets.tsx';

export function Terminal({ podId }: { podId: string }) {
  const api = useApi();
  const [out, setOut] = useState('');
  const [state, setState] = useState<'closed' | 'opening' | 'open'>('closed');
  const sock = useRef<PodExecSocket | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLPreElement>(null);
  const decoder = useRef(new TextDecoder());
  const append = (s: string) => setOut((o) => (o + s).slice(-200_000));
  useEffect(() => () => sock.current?.close(), []);
  useEffect(() => {
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [out]);

  const open = async () => {
    setState('opening');
    try {
      const session = await api.pods.execSession(podId, ['sh'], {}, {
        stdout: (d) => append(decoder.current.decode(d, { stream: true })),
        stderr: (d) => append(decoder.current.decode(d, { stream: true })),
      });
      sock.current = session;
      setState('open');
      append(`connected: sh in pod ${podId}\n`);
      input.current?.focus();
      session.ended.then(
        (end) => append(`\n[session ended: ${end.reason}${end.code === null ? '' : `, exit ${end.code}`}]\n`),
        (e: unknown) => append(`\n[session ended: ${messageOf(e)}]\n`),
      ).finally(() => {
        sock.current = null;
        setState('closed');
      });
    } catch (e) {
      append(`could not open the terminal: ${messageOf(e)}\n`);
      setState('closed');
    }
  };

  const send = (e: Event) => {
    e.preventDefault();
    const line = input.current!.value;
    input.current!.value = '';
    append(`$ ${line}\n`);
    sock.current?.write(`${line}\n`);
  };

  return (
    <section aria-label="Terminal">
      <pre ref={box} class="log terminal" role="log" aria-label="Terminal output" tabIndex={0}>
        {out}
      </pre>
      {state === 'open' ? (
        <form class="row" onSubmit={send}>
          <label for="term-input">Command</label>
          <input id="term-input" ref={input} autocomplete="off" spellcheck={false} class="mono grow" />
          <button type="submit">Send</button>
          <button type="button" onClick={() => sock.current?.close()}>
            Close terminal
          </button>
        </form>
      ) : (
        <button type="button" class="primary" disabled={state === 'opening'} onClick={open}>
          {state === 'opening' ? 'Opening…' : 'Open terminal'}
        </button>
      )}
    </section>
  );
}
