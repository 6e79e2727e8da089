// docker's messages for failed pulls (as docker 24–27 print them) and the words a tenant reads instead.
import { describe, expect, test } from 'vitest';
import { classifyPullError, runFailureReason } from '../../provisioner/pull-errors.ts';

const SECRET = 'HOST-LOCAL-SECRET db_password=hunter2';

describe('classifyPullError', () => {
  test.each([
    ['Error response from daemon: manifest for ghcr.io/a/b:1 not found: manifest unknown: manifest unknown', 'not-found'],
    ["Error response from daemon: pull access denied for nope/x, repository does not exist or may require 'docker login': denied: requested access to the resource is denied", 'not-found'],
    ['Error response from daemon: Head "http://127.0.0.1:5000/v2/private/app/manifests/1": no basic auth credentials', 'unauthorized'],
    ['Error response from daemon: login attempt to http://127.0.0.1:5000/v2/ failed with status: 401 Unauthorized', 'unauthorized'],
    [`error pulling image configuration: download failed after attempts=1: denied: ${SECRET}`, 'unauthorized'],
    ['Error response from daemon: Get "https://registry.invalid/v2/": dial tcp: lookup registry.invalid on 127.0.0.53:53: no such host', 'unreachable'],
    ['Error response from daemon: Get "https://10.9.9.9/v2/": dial tcp 10.9.9.9:443: connect: connection refused', 'unreachable'],
    ['Error response from daemon: Get "https://r.example/v2/": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)', 'timed-out'],
    ['Error response from daemon: Get "https://r.example/v2/": dial tcp 1.2.3.4:443: i/o timeout', 'timed-out'],
    ['Error response from daemon: Get "https://r.example/v2/": tls: failed to verify certificate: x509: certificate signed by unknown authority', 'tls'],
    ['Error response from daemon: Get "https://127.0.0.1:5000/v2/": http: server gave HTTP response to HTTPS client', 'tls'],
    ['toomanyrequests: You have reached your pull rate limit.', 'rate-limited'],
    ['Error response from daemon: no matching manifest for linux/amd64 in the manifest list entries', 'platform'],
    ['failed to register layer: write /usr/lib/x: no space left on device', 'no-space'],
    ['invalid reference format', 'invalid-reference'],
    ['filesystem layer verification failed for digest sha256:abc', 'corrupt'],
    ['Error response from daemon: received unexpected HTTP status: 502 Bad Gateway', 'registry-error'],
    [`error pulling image configuration: error parsing HTTP 404 response body: invalid character 'H' looking for beginning of value: "${SECRET} denied timed out"`, 'not-found'],
    [`error parsing HTTP 418 response body: invalid character: "${SECRET} unauthorized"`, 'registry-error'],
    [SECRET, 'unknown'],
  ])('%s', (raw, kind) => {
    const got = classifyPullError(raw);
    expect(got.kind).toBe(kind);
    expect(got.reason).not.toContain('HOST-LOCAL');
    expect(got.reason).not.toContain('hunter2');
  });
});

test("runFailureReason keeps the container's own failure and words a registry's as a pull", () => {
  const own = 'docker: Error response from daemon: failed to create task for container: exec: "nope": executable file not found in $PATH: unknown.';
  expect(runFailureReason(own)).toBe(own);
  expect(runFailureReason(`docker: Error response from daemon: pull access denied for x, repository does not exist: denied: ${SECRET}`)).toBe('fetching the image failed: image not found');
});
