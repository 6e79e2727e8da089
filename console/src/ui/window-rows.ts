// Windowed rows for long tables: past WINDOW_FROM rows only those in (or near) the viewport are in the
// page, between two spacer rows that keep the table's full height, so a list of thousands lays out
// and paints as fast as a screenful. Shorter lists render every row (find-in-page sees them all).
import { useEffect, useRef, useState } from 'preact/hooks';

export const WINDOW_FROM = 200;
const OVERSCAN = 20;

export interface RowWindow {
  start: number;
  end: number;
  /** px above the first rendered row and below the last */
  before: number;
  after: number;
}

/** the rows of `count` (each `rowPx` tall) to render, given the scroll position of the page */
export function useRowWindow(count: number, rowPx: number) {
  const body = useRef<HTMLTableSectionElement>(null);
  const [win, setWin] = useState<RowWindow>({ start: 0, end: Math.min(count, 60), before: 0, after: 0 });
  useEffect(() => {
    if (count <= WINDOW_FROM) {
      setWin({ start: 0, end: count, before: 0, after: 0 });
      return;
    }
    let frame = 0;
    const measure = () => {
      frame = 0;
      const top = body.current ? body.current.getBoundingClientRect().top : 0;
      const first = Math.max(0, Math.floor(-top / rowPx) - OVERSCAN);
      const last = Math.min(count, Math.ceil((window.innerHeight - top) / rowPx) + OVERSCAN);
      const end = Math.max(last, Math.min(count, first + 1));
      setWin((w) => (w.start === first && w.end === end ? w : { start: first, end, before: first * rowPx, after: (count - end) * rowPx }));
    };
    const schedule = () => {
      frame ||= requestAnimationFrame(measure);
    };
    measure();
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    return () => {
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
      if (frame) cancelAnimationFrame(frame);
    };
  }, [count, rowPx]);
  const w = count <= WINDOW_FROM ? { start: 0, end: count, before: 0, after: 0 } : { ...win, end: Math.min(win.end, count), after: Math.max(0, (count - Math.min(win.end, count)) * rowPx) };
  return { body, win: w };
}
