// No log line holds an API key (issue 8, item 8): the control plane logs through a pino logger into
// memory at the most verbose level while keys travel in every way a client sends them (Bearer header,
// `?api_key=` on /graphql, `?api_key=` where it is refused, spelled oddly, in absolute-form targets,
// in URLs the router cannot read); then the log is searched for the keys.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADMIN_KEY, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { sendRaw } from './raw-http.ts';

let cp: TestControlPlane;
let log = '';
let tenantKey: string;
const UNKNOWN_KEY = 'gf_unknown_but_secret_key_ZXCVBNM0987654321';

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      log += chunk.toString();
      done();
    },
  });
  cp = await startTestControlPlane({ logger: pino({ level: 'trace' }, sink), rateLimits: 'minute=100000,hour=100000,day=100000' });
  tenantKey = (await cp.newAccount('read_write')).key;
});
afterAll(async () => cp?.close());

describe('the logs', () => {
  test('hold no API key, whichever way it was sent', { timeout: 30_000 }, async () => {
    const gqlBody = JSON.stringify({ query: '{ myself { id } }' });
    const requests: [string, string, Record<string, string>, string?][] = [];
    for (const key of [ADMIN_KEY, tenantKey, UNKNOWN_KEY]) {
      const enc = encodeURIComponent(key);
      requests.push(
        ['GET', '/v2/pods', { authorization: `Bearer ${key}` }],
        ['GET', '/v2/nope', { authorization: `Bearer ${key}` }],
        ['GET', '/v2/pods', { authorization: `bearer   ${key}  ` }],
        ['GET', '/v2/pods', { authorization: `Basic ${key}` }],
        ['POST', `/graphql?api_key=${enc}`, {}, gqlBody],
        ['POST', `/graphql/?api_key=${enc}&x=1`, {}, gqlBody],
        ['POST', `http://x/graphql?other=1&api_key=${enc}`, {}, gqlBody],
        ['POST', `/graphql?%61pi_key=${enc}`, {}, gqlBody],
        ['POST', `/graphql?API_KEY=${enc}`, {}, gqlBody],
        ['POST', `/graphql?api_key=${enc}&api_key=${enc}`, {}, gqlBody],
        ['POST', '/graphql', { authorization: `Bearer ${key}` }, gqlBody],
        ['GET', `/v2/pods?api_key=${enc}`, {}],
        ['GET', `/v2/accounts?api_key=${enc}`, { authorization: `Bearer ${key}` }],
        ['GET', `/%76%32/pods?api_key=${enc}`, {}],
        ['GET', `/healthz?api_key=${enc}`, {}],
        ['GET', `/v2/nope?api_key=${enc}`, {}],
        ['GET', `/v2/pods/%zz?api_key=${enc}`, {}],
        ['GET', `/v2/pods/${'x'.repeat(300)}?api_key=${enc}`, {}],
      );
    }
    for (const [method, target, headers, body] of requests) {
      const a = await sendRaw(cp.url, { method, target, headers, ...(body ? { body } : {}) });
      expect(a.status, `${method} ${target}`).toBeLessThan(500);
    }
    // a line a handler might write about a request's headers is censored too
    cp.app.log.info({ headers: { authorization: `Bearer ${ADMIN_KEY}` } }, 'headers of a request');
    cp.app.log.info({ req: { headers: { authorization: `Bearer ${tenantKey}` } } }, 'a request');
    await new Promise((r) => setTimeout(r, 200));

    // the requests were logged (so this test could fail), with the key censored
    expect(log).toContain('incoming request');
    expect(log).toContain('/graphql?api_key=[Redacted]');
    expect(log).toContain('"authorization":"[Redacted]"');
    for (const key of [ADMIN_KEY, tenantKey, UNKNOWN_KEY]) {
      // the key, and the part of it after the non-secret prefix, in plain and URL-encoded spelling
      for (const s of new Set([key, key.slice(8), encodeURIComponent(key), encodeURIComponent(key.slice(8))])) expect(log.includes(s), `the log holds ${s}`).toBe(false);
    }
  });
});
