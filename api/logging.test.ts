import { describe, expect, it } from 'vitest';
import { redactUrl } from './logging.ts';

describe('redactUrl', () => {
  it('censors every credential-bearing query parameter and leaves the rest', () => {
    const out = redactUrl('/v2/pods/p1/exec/ws?command=sh&ticket=tk_secret&api_key=k1&signature=s1&Api_Key=k2&tail=5');
    expect(out).not.toMatch(/tk_secret|k1|s1|k2/);
    expect(out).toContain('command=sh');
    expect(out).toContain('tail=5');
  });

  it('answers a URL with no credential unchanged', () => {
    expect(redactUrl('/v2/pods?limit=5')).toBe('/v2/pods?limit=5');
  });
});
