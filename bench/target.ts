// Every bench ends with its floor: one `target:` line (what was measured, the floor, PASS or MISS) that
// bench/run-all.ts collects, and a non-zero exit status when the floor is missed.

export interface Target {
  /** what is measured, e.g. "store mutations/s at 10k pods" */
  name: string;
  value: number;
  /** the floor: value >= floor ('>=') or value <= floor ('<=') passes */
  op: '>=' | '<=';
  floor: number;
  /** printed right after each number, e.g. "×" or "/s" */
  unit?: string;
  digits?: number;
}

export function checkTarget(t: Target): boolean {
  const ok = t.op === '>=' ? t.value >= t.floor : t.value <= t.floor;
  const d = t.digits ?? 2;
  const unit = t.unit ?? '';
  console.log(`target: ${t.name}: ${t.value.toFixed(d)}${unit} (floor ${t.op === '>=' ? '≥' : '≤'} ${t.floor}${unit}) ${ok ? 'PASS' : 'MISS'}`);
  if (!ok) process.exitCode = 1;
  return ok;
}
