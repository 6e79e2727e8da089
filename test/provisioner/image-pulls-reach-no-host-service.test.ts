// A pull never carries a host-local service's answer to the tenant (issue 18, item 1; docs/security.md,
// "Registries a tenant may name"), end to end: a real sshd test host, the machine's Docker engine, a
// service on the host's loopback that answers a secret. A registry name that resolves to loopback is
// refused before the host is told to pull; a registry the operator allowed that redirects a blob to
// that service does make the daemon fetch it, and the pod's reason, events, system log lines and
// GraphQL lastStatusChange say what failed in our words, never what the service said (the operator's
// log has docker's message).
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { imageRegistryRefusal, isPrivateAddress } from '../../model/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { addHostsLine } from '../harness/etc-hosts.ts';
import { dockerInspect, disposeHostWorld, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { startLoopbackSecretService, startRedirectingRegistry, type LoopbackSecretService, type RedirectingRegistry } from '../harness/redirecting-registry.ts';
import { readSse } from '../harness/sse-reader.ts';
import { waitFor } from '../harness/wait-for.ts';

type J = any;
const GPU = 'NVIDIA H100 80GB HBM3';
const SECRET = `HOST-LOCAL-SECRET-${process.pid}-${Date.now()} db_password=hunter2-${Math.random().toString(36).slice(2)}`;

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let secret: LoopbackSecretService;
let registry: RedirectingRegistry;
let user: { accountId: string; key: string };
let operatorLog = '';

beforeAll(async () => {
  secret = await startLoopbackSecretService(SECRET);
  registry = await startRedirectingRegistry(`http://${secret.address}/blob`);
  host = await startTestHost({ name: `ssrf-${process.pid}`, gpus: [0, 1].map(() => FIXTURE_GPUS.H100_80GB_HBM3) });
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        operatorLog += chunk.toString();
        cb();
      },
    }),
  );
  // the operator allows the (hostile) registry, as the tests' local registries are allowed
  cp = await startTestControlPlane({ background: [provisioner({ logger })], reconcileIntervalMs: 300, config: { allowedRegistries: [registry.address] } });
  hostId = await enrolTestHost(cp, host);
  user = await cp.newAccount();
}, 120_000);

afterAll(async () => {
  await removeHostsEntry?.();
  await disposeHostWorld({ cp, host, hostId });
  await registry?.close();
  await secret?.close();
});

/** a temporary /etc/hosts line this test added (removed in afterAll), when the machine had no usable name */
let removeHostsEntry: (() => Promise<void>) | undefined;

/**
 * A registry host name that passes the text rule and that this machine resolves to a loopback or private
 * address: the machine's own name where /etc/hosts maps it so (Debian does), else a name of this test's
 * own, written into /etc/hosts for the test (a CI machine may map its hostname elsewhere, or not at all).
 */
async function loopbackName(): Promise<string> {
  const usable = async (name: string) =>
    imageRegistryRefusal(`${name}:5000/x:1`, []) === null &&
    (await lookup(name, { all: true }).then((as) => as.length > 0 && as.every((a) => isPrivateAddress(a.address)), () => false));
  const own = os.hostname().toLowerCase();
  if (await usable(own)) return own;
  const name = `gf-loopback-${process.pid}.example`;
  removeHostsEntry = await addHostsLine(`127.0.0.1 ${name}`);
  return name;
}

async function settledPod(name: string, image: string): Promise<J> {
  const res = await cp.api('/v2/pods', { method: 'POST', key: user.key, json: { name, image, disk: 1, gpu: { id: GPU } } });
  const body = (await res.json()) as J;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return waitFor(`pod ${name} settled`, async () => {
    const p = (await (await cp.api(`/v2/pods/${body.id}`, { key: user.key })).json()) as J;
    return p.status === 'RUNNING' || p.status === 'ERROR' ? p : null;
  }, 90_000);
}

/** everything the tenant can read about the pod: its view, its events, its system log lines, GraphQL */
async function tenantReadable(podId: string): Promise<string> {
  const view = await (await cp.api(`/v2/pods/${podId}`, { key: user.key })).text();
  const events = await (await cp.api(`/v2/events?resourceId=${podId}`, { key: user.key })).text();
  const sse = await readSse(`${cp.url}/v2/pods/${podId}/logs?source=system&tail=5000`, { headers: { authorization: `Bearer ${user.key}` } });
  const lines: string[] = [];
  try {
    for (;;) lines.push((await sse.next(1_000)).data);
  } catch (e) {
    expect(String(e)).toMatch(/no event/);
  } finally {
    sse.close();
  }
  const gql = await (
    await cp.api('/graphql', { method: 'POST', key: user.key, json: { query: 'query($id: String!) { pod(input: {podId: $id}) { lastStatusChange } }', variables: { id: podId } } })
  ).text();
  expect(JSON.parse(gql).data.pod.lastStatusChange).toBeTruthy();
  expect(lines.length).toBeGreaterThan(0);
  return [view, events, lines.join('\n'), gql].join('\n');
}

describe('image pulls reach no host-local service for a tenant', () => {
  test('a registry name that resolves to the host loopback is refused before the pull: the service is never asked', async () => {
    const name = await loopbackName();
    const image = `${name}:${secret.address.split(':')[1]}/secret/x:1`;
    // the name passes the text rule and resolves here to a loopback or private address (/etc/hosts)
    expect(imageRegistryRefusal(image, []), `${name} is refused by its text already`).toBeNull();
    const addrs = await lookup(name, { all: true });
    expect(addrs.some((a) => isPrivateAddress(a.address)), `${name} resolves to ${JSON.stringify(addrs)}`).toBe(true);
    const p = await settledPod('by-name', image);
    expect(p.status).toBe('ERROR');
    expect(p.statusReason).toBe(
      `image pull failed: refused by policy: the registry ${image.split('/')[0]} resolves to a loopback, private or link-local address (the operator can allow a registry: GPUFLEET_ALLOWED_REGISTRIES)`,
    );
    expect(secret.hits).toEqual([]);
    expect(await dockerInspect(`gpufleet-${p.id}`)).toBeNull();
  });

  test("a registry that redirects a blob to a host-loopback service: the daemon fetches it, and its answer reaches no field the tenant reads", async () => {
    const p = await settledPod('redirected', `${registry.address}/evil/app:1`);
    expect(p.status).toBe('ERROR');
    // the fault happened: the registry sent the daemon to the service, which answered the secret
    expect(registry.hits.some((h) => h.includes('/blobs/'))).toBe(true);
    expect(secret.hits.length).toBeGreaterThan(0);
    // what failed, in our words
    expect(p.statusReason).toBe('image pull failed (with no registry credential on the pod): unauthorized: the registry refused the credentials (or their absence)');
    const readable = await tenantReadable(p.id);
    expect(readable).toContain('image pull failed');
    for (const part of [SECRET, SECRET.split(' ')[0]!, 'db_password', 'denied:', secret.address]) expect(readable).not.toContain(part);
    // docker's own words are in the operator's log
    await waitFor('the operator log line', async () => operatorLog.includes(SECRET.split(' ')[0]!), 10_000);
    expect(operatorLog).toMatch(/image pull failed/);
  });
});
