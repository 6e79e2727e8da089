// A time-series chart (uPlot): x is seconds since the epoch, one line per series. Drawn on a canvas;
// the same numbers are offered as a table for screen readers and keyboard users.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  label: string;
  values: (number | null)[];
}

const COLOURS = ['#1f5fbf', '#b3261e', '#1b7f3b', '#8a4fbf', '#b36b00', '#007c89'];

export function Chart({ title, times, series, unit }: { title: string; times: number[]; series: Series[]; unit?: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const plot = new uPlot(
      {
        title,
        width: Math.max(320, el.clientWidth || 640),
        height: 220,
        series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length]!, width: 2, value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${v}${unit ?? ''}`) }))],
        axes: [{}, { label: unit ?? '' }],
      },
      [times, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [title, times, series, unit]);
  return (
    <figure class="chart">
      <div ref={box} aria-hidden="true" />
      <details>
        <summary>{title} as a table</summary>
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Time</th>
              {series.map((s) => (
                <th scope="col">{s.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {times.map((t, i) => (
              <tr>
                <td>{new Date(t * 1000).toLocaleTimeString()}</td>
                {series.map((s) => (
                  <td>{s.values[i] ?? '—'}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
