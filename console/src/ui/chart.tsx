// A time-series chart (uPlot): x is seconds since the epoch, one line per series. Drawn on a canvas;
// the same numbers are offered as a table for screen readers and keyboard users. New numbers for the
// same series are drawn into the same plot (live charts update without being rebuilt).
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  label: string;
  values: (number | null)[];
}

const COLOURS = ['#1f5fbf', '#b3261e', '#1b7f3b', '#8a4fbf', '#b36b00', '#007c89'];

/** `range`: the y axis from and to (e.g. 0 to 100 for a percentage); default: fitted to the values */
export function Chart({ title, times, series, unit, height = 220, range }: { title: string; times: number[]; series: Series[]; unit?: string; height?: number; range?: [number, number] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const labels = series.map((s) => s.label).join('\n');
  const data = [times, ...series.map((s) => s.values)] as uPlot.AlignedData;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const p = new uPlot(
      {
        title,
        width: Math.max(320, el.clientWidth || 640),
        height,
        series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length]!, width: 2, value: (_u: uPlot, v: number | null) => (v === null ? '—' : `${v}${unit ?? ''}`) }))],
        axes: [{}, { label: unit ?? '' }],
        ...(range ? { scales: { y: { range: () => range } } } : {}),
      },
      data,
      el,
    );
    plot.current = p;
    return () => {
      p.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [title, labels, unit, height, range?.[0], range?.[1]]);
  useEffect(() => {
    plot.current?.setData(data);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [times, series]);
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
