// The text a form holds and the values the API takes: lists written with spaces or commas
// ("8888/http 22/tcp"), and environments written one KEY=value a line.

/** "a, b c" → ["a", "b", "c"] */
export function listOf(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** one KEY=value a line → {KEY: value}; lines without a key are left out */
export function envOf(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    if (line.trim() && at > 0) env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return env;
}

/** {KEY: value} → one KEY=value a line */
export function envText(env: unknown): string {
  if (!env || typeof env !== 'object') return '';
  return Object.entries(env as Record<string, unknown>)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join('\n');
}
