// Private images are not readable across tenants (issue 8, item 5; docs/security.md), end to end: a
// real private registry (Debian's docker-registry with htpasswd auth), a real sshd test host, the
// real Docker engine, the control plane with its provisioner. An image one account pulled with its
// registry credentials stays in the host's cache; another account naming it must pull it with
// credentials of its own (cheap: the layers are cached) or its pod ends in ERROR with the reason.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import {
  disposeHostWorld,
  dockerInspect,
  enrolTestHost,
  ensureTestImage,
  FIXTURE_GPUS,
  runDocker,
  startPrivateRegistry,
  startTestHost,
  type PrivateRegistry,
  type TestHost,
} from '../harness/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { waitFor as waitForHarness } from '../harness/wait-for.ts';

type J = Record<string, any>;
type Account = { accountId: string; key: string };
const GPU = 'NVIDIA H100 80GB HBM3';
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
const ALICE_PW = `alice-${randomBytes(9).toString('hex')}`;
const BOB_PW = `bob-${randomBytes(9).toString('hex')}`;

let cp: TestControlPlane;
let registry: PrivateRegistry;
let host: TestHost;
let hostId = '';
let baseImage: string;
/** the private image: `<registry>/private/app:1`, its manifest digest, and its image id once pulled */
let ref = '';
let digest = '';
let imageId = '';
let alice: Account;
let bob: Account;
let carol: Account;
const creds: Record<string, string> = {};

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 200);

/** Creates a pod and waits until it settles in RUNNING or ERROR. */
async function settledPod(who: Account, name: string, image: string, registryId: string | null): Promise<J> {
  const res = await cp.api('/v2/pods', { method: 'POST', key: who.key, json: { name, image, args: SLEEPER, disk: 1, gpu: { id: GPU }, registry: registryId } });
  const body = (await res.json()) as J;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return waitFor(`pod ${name} settled`, async () => {
    const p = (await (await cp.api(`/v2/pods/${body.id}`, { key: who.key })).json()) as J;
    return p.status === 'RUNNING' || p.status === 'ERROR' ? p : null;
  });
}

async function newCredential(who: Account, name: string, username: string, password: string): Promise<string> {
  const res = await cp.api('/v2/registries', { method: 'POST', key: who.key, json: { name, username, password } });
  const body = (await res.json()) as J;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id as string;
}

const cached = (image: string) =>
  runDocker(['image', 'inspect', '--format', '{{.Id}}', image]).then(
    (r) => r.stdout.trim(),
    () => null,
  );
const privateImages = async (): Promise<J[]> => ((await (await cp.api(`/v2/hosts/${hostId}`)).json()) as J).privateImages ?? [];
const terminate = (who: Account, id: string) => cp.api(`/v2/pods/${id}`, { method: 'DELETE', key: who.key });

beforeAll(async () => {
  baseImage = await ensureTestImage();
  registry = await startPrivateRegistry({ alice: ALICE_PW, bob: BOB_PW });
  // an image of its own (a label makes a new image id), so no locally built tag shares its id
  const source = `gpufleet-test/private-src:${process.pid}`;
  await runDocker(['build', '-q', '-t', source, '-'], { stdin: `FROM ${baseImage}\nLABEL gpufleet.test.private="${process.pid}-${Date.now()}"\n` });
  ({ ref, digest } = await registry.push(source, 'private/app:1', 'alice'));
  await runDocker(['rmi', source]); // from here on only a pull brings it to the engine
  host = await startTestHost({ name: `priv-${process.pid}`, gpus: [0, 1, 2, 3].map(() => FIXTURE_GPUS.H100_80GB_HBM3) });
  // a registry on loopback: the operator allows it (GPUFLEET_ALLOWED_REGISTRIES), or tenants may not name it
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, config: { allowedRegistries: [registry.address] } });
  hostId = await enrolTestHost(cp, host);
  alice = await cp.newAccount();
  bob = await cp.newAccount();
  carol = await cp.newAccount();
  creds.alice = await newCredential(alice, 'alice', 'alice', ALICE_PW);
  creds.bob = await newCredential(bob, 'bob', 'bob', BOB_PW);
  creds.bobWrong = await newCredential(bob, 'bob-wrong', 'bob', 'not-the-password');
}, 180_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
  const id = ref ? await cached(ref) : null;
  if (id) await runDocker(['rmi', '-f', id]).catch(() => undefined);
  await registry?.close();
});

describe('private images on a shared host', () => {
  test('a private image pulled with registry credentials runs for the account that pulled it', async () => {
    expect(await cached(ref)).toBeNull();
    const p = await settledPod(alice, 'alice-private', ref, creds.alice!);
    expect(p.status, p.statusReason).toBe('RUNNING');
    imageId = (await cached(ref))!;
    expect(imageId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await privateImages()).toEqual([{ imageId, accountIds: [alice.accountId] }]);
  });

  test('another account cannot run the cached private image without registry credentials', async () => {
    expect(await cached(ref)).toBe(imageId); // in the cache: `docker run --pull never` alone would run it
    const p = await settledPod(bob, 'bob-none', ref, null);
    expect(p.status).toBe('ERROR');
    expect(p.statusReason).toBe('image pull failed (with no registry credential on the pod): unauthorized: the registry refused the credentials (or their absence)');
    expect(await dockerInspect(`gpufleet-${p.id}`)).toBeNull();
    await terminate(bob, p.id);
  });

  test('naming the cached private image by digest or by image id does not get around the check', async () => {
    const byDigest = `${ref.slice(0, ref.lastIndexOf(':'))}@${digest}`;
    for (const [name, image] of [
      ['bob-digest', byDigest],
      ['bob-id', imageId],
      ['bob-short-id', imageId.slice('sha256:'.length, 'sha256:'.length + 12)],
    ] as const) {
      const p = await settledPod(bob, name, image, null);
      expect(p.status, `${image}: ${p.statusReason}`).toBe('ERROR');
      expect(p.statusReason).toMatch(/^image pull failed/);
      expect(await dockerInspect(`gpufleet-${p.id}`)).toBeNull();
      await terminate(bob, p.id);
    }
  });

  test('wrong registry credentials end in ERROR with the reason', async () => {
    const p = await settledPod(bob, 'bob-wrong', ref, creds.bobWrong!);
    expect(p.status).toBe('ERROR');
    expect(p.statusReason).toBe(`image pull failed (with registry credential ${creds.bobWrong}): unauthorized: the registry refused the credentials (or their absence)`);
    expect(await dockerInspect(`gpufleet-${p.id}`)).toBeNull();
    await terminate(bob, p.id);
  });

  test("another account's own valid credentials pull the image again and run it", async () => {
    const p = await settledPod(bob, 'bob-own', ref, creds.bob!);
    expect(p.status, p.statusReason).toBe('RUNNING');
    expect(await privateImages()).toEqual([{ imageId, accountIds: [alice.accountId, bob.accountId] }]);
  });

  test('the right to run a private image is per account: a third account is still refused', async () => {
    const p = await settledPod(carol, 'carol-none', ref, null);
    expect(p.status).toBe('ERROR');
    expect(p.statusReason).toMatch(/^image pull failed \(with no registry credential on the pod\): unauthorized/);
    await terminate(carol, p.id);
  });

  test("a digest cached privately for others runs once the registry accepts the account's own credentials for it", async () => {
    // docker would serve this pull from its cache without asking the registry; the manifest check asks
    const cred = await newCredential(carol, 'carol', 'bob', BOB_PW);
    const p = await settledPod(carol, 'carol-digest', `${ref.slice(0, ref.lastIndexOf(':'))}@${digest}`, cred);
    expect(p.status, p.statusReason).toBe('RUNNING');
    expect((await privateImages())[0]!.accountIds).toContain(carol.accountId);
    await terminate(carol, p.id);
  });

  test('an image built on the host without a registry still runs from the cache', async () => {
    const p = await settledPod(carol, 'carol-local', baseImage, null);
    expect(p.status, p.statusReason).toBe('RUNNING');
    await terminate(carol, p.id);
  });
});
