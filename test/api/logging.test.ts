import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../api/logging.ts';

describe('redactUrl', () => {
  it('censors every credential-bearing query parameter and leaves the rest', () => {
    const out = redactUrl('/v2/pods/p1/exec/ws?command=sh&ticket=tk_secret&api_key=k1&signature=s1&Api_Key=k2&tail=5');
    expect(out).not.toMatch(/tk_secret|k1|s1|k2/);
    expect(out).toContain('command=sh');
    expect(out).toContain('tail=5');
  });

  it("censors a pod port's signed link token (docs/connect.md)", () => {
    const out = redactUrl('/.pod-port/abc/8888/lab?x=1&gpufleet_link=v1.payload.mac');
    expect(out).toMatch(/^\/\.pod-port\/abc\/8888\/lab\?x=1&gpufleet_link=/);
    expect(out).not.toMatch(/payload|mac/);
  });

  it('answers a URL with no credential unchanged', () => {
    expect(redactUrl('/v2/pods?limit=5')).toBe('/v2/pods?limit=5');
  });
});
