// The rate-limit windows and their quotas (GPUFLEET_RATE_LIMITS), shared by the config and the limiter.
export const WINDOWS = [
  { name: 'minute', seconds: 60 },
  { name: 'hour', seconds: 3600 },
  { name: 'day', seconds: 86400 },
] as const;
export type WindowName = (typeof WINDOWS)[number]['name'];
export type Quotas = Record<WindowName, number>;

export const DEFAULT_QUOTAS: Quotas = { minute: 600, hour: 10000, day: 100000 };

/** `minute=600,hour=10000,day=100000`; windows left out keep their defaults. */
export function parseQuotas(text: string | undefined): Quotas {
  const q = { ...DEFAULT_QUOTAS };
  if (!text?.trim()) return q;
  for (const part of text.split(',')) {
    const m = /^\s*(minute|hour|day)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m) throw new Error(`GPUFLEET_RATE_LIMITS: cannot read "${part}"; write minute=600,hour=10000,day=100000`);
    q[m[1] as WindowName] = Number(m[2]);
  }
  return q;
}
