// A log that follows: the events of a pod's or a worker's log stream (GET …/logs, server-sent
// events), the newest at the bottom, kept to the last 2,000 lines; reopened after a drop.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PodLogEvent } from '../../../client/index.ts';
import { messageOf } from './widgets.tsx';

const KEEP = 2000;

interface Line {
  key: number;
  text: string;
  kind: string;
}

function lineOf(e: PodLogEvent, key: number, prefix: string): Line | null {
  if (e.event === 'end') return { key, text: '— end of log —', kind: 'system' };
  if (e.event === 'problem') {
    const p = JSON.parse(e.data) as { detail?: string };
    return { key, text: `problem: ${p.detail ?? e.data}`, kind: 'stderr' };
  }
  try {
    const d = JSON.parse(e.data) as { line?: string; stream?: string; source?: string };
    return { key, text: prefix + (d.line ?? ''), kind: d.source === 'system' ? 'system' : (d.stream ?? 'stdout') };
  } catch {
    return { key, text: prefix + e.data, kind: 'stdout' };
  }
}

export function LogView(props: { label: string; open: (signal: AbortSignal) => AsyncGenerator<PodLogEvent>; prefix?: string }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState('connecting');
  const box = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  useEffect(() => {
    const ac = new AbortController();
    let n = 0;
    void (async () => {
      try {
        setState('following');
        const batch: Line[] = [];
        let flush: ReturnType<typeof setTimeout> | null = null;
        for await (const e of props.open(ac.signal)) {
          const l = lineOf(e, n++, props.prefix ?? '');
          if (!l) continue;
          batch.push(l);
          // lines are shown in batches, at most every 100 ms, so a chatty container does not re-render per line
          flush ??= setTimeout(() => {
            flush = null;
            const add = batch.splice(0);
            setLines((old) => [...old, ...add].slice(-KEEP));
          }, 100);
          if (e.event === 'end') break;
        }
        setState('ended');
      } catch (e) {
        if (!ac.signal.aborted) setState(`stopped: ${messageOf(e)}`);
      }
    })();
    return () => ac.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.open]);
  useEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [lines]);
  return (
    <section aria-label={props.label}>
      <p class="muted" aria-live="polite">
        {props.label}: {state}, {lines.length} line{lines.length === 1 ? '' : 's'}
      </p>
      <pre
        ref={box}
        class="log"
        role="log"
        tabIndex={0}
        aria-label={props.label}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
        }}
      >
        {lines.map((l) => (
          <span key={l.key} class={`log-${l.kind}`}>
            {l.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </section>
  );
}
