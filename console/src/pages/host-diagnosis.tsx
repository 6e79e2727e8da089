// A host's diagnosis on Fleet (docs/gpu-health.md, "Diagnose"): the answer of
// POST /v2/hosts/{id}/diagnose shown on the host's card: passed or failed, the method (and DCGM's level), and
// each GPU's verdict with its summary and the health it left.
import { Status } from '../ui/widgets.tsx';

export interface Diagnosis {
  method: string;
  level: number;
  passed: boolean;
  gpus: { index: number; uuid: string; passed: boolean; summary: string; health: string }[];
}

export function DiagnosisResult({ hostName, result, busy }: { hostName: string; result: Diagnosis | null; busy: boolean }) {
  if (busy) return <p aria-live="polite">Diagnosing {hostName}…</p>;
  if (!result) return null;
  return (
    <section aria-label={`Diagnosis of ${hostName}`} aria-live="polite">
      <h3>
        Diagnosis: {result.passed ? 'passed' : 'failed'} ({result.method}
        {result.level > 0 ? `, level ${result.level}` : ''})
      </h3>
      <table class="list" aria-label={`Diagnosis of each GPU of ${hostName}`}>
        <thead>
          <tr>
            <th scope="col">GPU</th>
            <th scope="col">Result</th>
            <th scope="col">Summary</th>
            <th scope="col">Health now</th>
          </tr>
        </thead>
        <tbody>
          {result.gpus.map((g) => (
            <tr>
              <td>{g.index}</td>
              <td>{g.passed ? 'passed' : 'failed'}</td>
              <td>{g.summary}</td>
              <td>
                <Status word={g.health} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
