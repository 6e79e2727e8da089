// SSH to pods end to end (issue 25; docs/connect.md "SSH", "gpufleet pods ssh"): a real sshd test
// host, the real Docker engine, the control plane with its provisioner and the podPortProxy mount
// (which serves the SSH tunnel), the real `gpufleet` CLI and this machine's OpenSSH client. The pods
// run Debian's openssh-server (test/harness/sshd-image.ts), which takes PUBLIC_KEY as the public
// cloud's images do.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, runDocker, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { ensureSshdImage } from '../harness/sshd-image.ts';
import { waitFor } from '../harness/wait-for.ts';
import { runCli, runProcess } from '../cli/run-cli.ts';
import { provisioner } from '../../provisioner/index.ts';
import { podPortProxy } from '../../gateway/index.ts';
import { containerName } from '../../provisioner/container-spec.ts';

type J = Record<string, any>;
const GPU = 'NVIDIA H100 80GB HBM3';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };
let dir = '';
let keyFile = '';
let publicKey = '';
let image = '';
/** sshd, no port published */
let hidden: J;
/** sshd with 22/tcp published */
let published: J;

const run = runProcess;

/** ssh/scp options: this test's key, no known_hosts, never a prompt; through `gpufleet pods ssh %h --proxy` unless direct */
const sshOptions = (proxy: boolean): string[] => [
  '-i', keyFile,
  '-o', 'IdentitiesOnly=yes',
  '-o', 'StrictHostKeyChecking=no',
  '-o', 'UserKnownHostsFile=/dev/null',
  '-o', 'BatchMode=yes',
  '-o', 'ConnectTimeout=20',
  '-o', 'LogLevel=ERROR',
  ...(proxy ? ['-o', `ProxyCommand=${process.execPath} ${path.join(REPO_ROOT, 'bin/gpufleet.js')} pods ssh %h --proxy`] : []),
];
const cliEnv = () => ({ GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: alice.key });

async function createPod(name: string, ports: string[]): Promise<J> {
  const res = await cp.api('/v2/pods', { method: 'POST', key: alice.key, json: { name, image, disk: 1, gpu: { id: GPU, count: 1 }, ports } });
  const body = (await res.json()) as J;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}
const podView = async (id: string) => (await (await cp.api(`/v2/pods/${id}`, { key: alice.key })).json()) as J;

beforeAll(async () => {
  image = await ensureSshdImage();
  dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-ssh-'));
  keyFile = path.join(dir, 'id_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice@test', '-f', keyFile]);
  publicKey = (await readFile(`${keyFile}.pub`, 'utf8')).trim();
  host = await startTestHost({ name: `ssh-${process.pid}`, gpus: [0, 1, 2].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, mounts: [podPortProxy()] });
  hostId = await enrolTestHost(cp, host);
  alice = await cp.newAccount();
  bob = await cp.newAccount();
  // as runpodctl sets them: GraphQL updateUserSettings, keys joined by a blank line
  const other = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGsTQvF4yY3v1oH8n3sJ6bqX7hHkW2bF3bY0b1yZ3b0n alice@desktop';
  const gql = await cp.api('/graphql', {
    method: 'POST',
    key: alice.key,
    json: { query: 'mutation($input: UpdateUserSettingsInput!) { updateUserSettings(input: $input) { id pubKey } }', variables: { input: { pubKey: `${publicKey}\n\n${other}` } } },
  });
  expect(((await gql.json()) as J).errors).toBeUndefined();
  hidden = await createPod('sshd-hidden', []);
  published = await createPod('sshd-published', ['22/tcp']);
  for (const p of [hidden, published]) await waitFor(`pod ${p.name} RUNNING`, async () => (await podView(p.id)).status === 'RUNNING', 90_000);
}, 240_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the account's SSH keys", () => {
  test('REST shows the keys GraphQL set, one a line, and replaces them; a key that is not one is 422 and changes nothing', async () => {
    const got = (await (await cp.api('/v2/account/ssh-keys', { key: alice.key })).json()) as J;
    expect(got.keys).toEqual([publicKey, expect.stringMatching(/alice@desktop$/)]);
    const bad = await cp.api('/v2/account/ssh-keys', { method: 'PUT', key: bob.key, json: { keys: ['ssh-ed25519 AAAA ok', 'rm -rf /'] } });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as J).errors).toEqual(['$.keys[1]: is not an OpenSSH public key (one line)']);
    expect(((await (await cp.api('/v2/account/ssh-keys', { key: bob.key })).json()) as J).keys).toEqual([]);
  });

  test('reach the pod as PUBLIC_KEY (gpufleet pods ssh -- runs the command through the control plane, no port published)', async () => {
    const r = await runCli(['pods', 'ssh', hidden.id, '--', 'echo', 'hello;', 'echo', '"$PUBLIC_KEY"'], { url: cp.url, key: alice.key }, 60_000);
    expect(r.code, r.stderr).toBe(0);
    const [first, ...keys] = r.stdout.trim().split('\n');
    expect(first).toBe('hello');
    expect(keys.filter((l) => l !== '')).toEqual([publicKey, expect.stringMatching(/alice@desktop$/)]);
  });

  test('startSsh: true (GraphQL, as the public clients send it) leaves the image\'s entrypoint and command as they are', async () => {
    const res = await cp.api('/graphql', {
      method: 'POST',
      key: alice.key,
      json: {
        query: 'mutation($input: PodFindAndDeployOnDemandInput) { podFindAndDeployOnDemand(input: $input) { id } }',
        variables: { input: { name: 'sshd-startssh', imageName: image, gpuTypeId: GPU, gpuCount: 1, cloudType: 'ALL', startSsh: true, containerDiskInGb: 1 } },
      },
    });
    const body = (await res.json()) as J;
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    const id = body.data.podFindAndDeployOnDemand.id as string;
    await waitFor('the GraphQL pod RUNNING', async () => (await podView(id)).status === 'RUNNING', 90_000);
    const c = (await dockerInspect(containerName(id))) as J;
    const img = (JSON.parse((await runDocker(['image', 'inspect', image])).stdout) as J[])[0]!;
    expect(c.Config.Entrypoint).toEqual(img.Config.Entrypoint);
    expect(c.Config.Cmd).toEqual(['/start.sh']);
    expect(c.Path).toBe('/start.sh');
    await cp.api(`/v2/pods/${id}`, { method: 'DELETE', key: alice.key });
  });
});

describe('ssh through the control plane: gpufleet pods ssh <id> --proxy as ProxyCommand', () => {
  test('ssh runs a command and scp copies a file both ways, with the account\'s key, no port published', async () => {
    const ssh = await run('ssh', [...sshOptions(true), `root@${hidden.id}`, 'echo via-proxy $(id -u)'], cliEnv());
    expect(ssh.code, ssh.stderr).toBe(0);
    expect(ssh.stdout.trim()).toBe('via-proxy 0');
    const local = path.join(dir, 'up.bin');
    const payload = Buffer.alloc(300_000, 7);
    payload.write('gpufleet scp test');
    await writeFile(local, payload);
    const up = await run('scp', [...sshOptions(true), local, `root@${hidden.id}:/tmp/up.bin`], cliEnv());
    expect(up.code, up.stderr).toBe(0);
    const back = path.join(dir, 'back.bin');
    const down = await run('scp', [...sshOptions(true), `root@${hidden.id}:/tmp/up.bin`, back], cliEnv());
    expect(down.code, down.stderr).toBe(0);
    expect((await readFile(back)).equals(payload)).toBe(true);
  });

  test("another account's key and a pod without an SSH server are refused before any byte; that pod's published 22/tcp gives no ssh.direct", async () => {
    const other = await runCli(['pods', 'ssh', hidden.id, '--proxy'], { url: cp.url, key: bob.key });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/not found/i);
    const tunnel = await fetch(`${cp.url}/v2/pods/${hidden.id}/ssh/tunnel`, { headers: { authorization: `Bearer ${alice.key}` } });
    expect(tunnel.status).toBe(400); // a WebSocket route: a plain GET is refused
    // an image with no SSH server: the busybox test image, sleeping
    const res = await cp.api('/v2/pods', {
      method: 'POST',
      key: alice.key,
      json: { name: 'no-sshd', image: await ensureTestImage(), disk: 1, gpu: { id: GPU, count: 1 }, args: "sh -c 'sleep 3600'", ports: ['22/tcp'] },
    });
    const plain = (await res.json()) as J;
    expect(res.status, JSON.stringify(plain)).toBe(201);
    await waitFor('the busybox pod RUNNING', async () => (await podView(plain.id)).status === 'RUNNING', 90_000);
    // its 22/tcp is published, but no SSH server answers there: no ssh.direct
    await waitFor('the probe of its 22/tcp', async () => (await cp.services.store.get('pods', plain.id))?.observed?.sshAnswers === false, 30_000);
    expect((await podView(plain.id)).ssh.direct).toBeNull();
    const none = await runCli(['pods', 'ssh', plain.id, '--proxy'], { url: cp.url, key: alice.key });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/Nothing answers on port 22 of pod/);
    // `pods ssh` without --proxy needs no SSH server: a shell's command runs there all the same
    const exec = await runCli(['pods', 'ssh', plain.id, '--', 'echo', 'no-sshd-needed'], { url: cp.url, key: alice.key });
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout.trim()).toBe('no-sshd-needed');
    await cp.api(`/v2/pods/${plain.id}`, { method: 'DELETE', key: alice.key });
  });

  test('the pod view: ssh.proxy always while running; ssh.direct once the published 22/tcp answers as an SSH server, and ssh connects there', async () => {
    const h = await podView(hidden.id);
    expect(h.ssh).toEqual({ proxy: { host: hidden.id, port: 22, username: 'root', command: `gpufleet pods ssh ${hidden.id}` }, direct: null });
    const p = await waitFor('ssh.direct', async () => {
      const v = await podView(published.id);
      return v.ssh.direct ? v : null;
    }, 30_000);
    const port = (p.runtime.ports as J[]).find((x) => x.private === 22)!;
    expect(p.ssh.direct).toEqual({ host: port.ip, port: port.public, username: 'root', command: `ssh root@${port.ip} -p ${port.public}` });
    const ssh = await run('ssh', [...sshOptions(false), '-p', String(port.public), `root@127.0.0.1`, 'echo direct']);
    expect(ssh.code, ssh.stderr).toBe(0);
    expect(ssh.stdout.trim()).toBe('direct');
  });
});
