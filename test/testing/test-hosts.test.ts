// Proves gpufleet/testing's parts (testing/): the image really runs, test hosts are real sshd servers
// reachable with their key, the fixture nvidia-smi answers only on GPU hosts, and stop/start/rotate behave.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'ssh2';
import { createHash } from 'node:crypto';
import {
  ensureAltTestImage,
  ensureTestImage,
  FIXTURE_GPUS,
  fixtureGpuUuid,
  runDocker,
  startTestHost,
  dockerAvailable,
  dockerInspect,
  listContainers,
  removeContainersByLabel,
  type TestHost,
} from '../../testing/index.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Session {
  fingerprint: string;
  /** resolves when the command ends (code null when the connection dropped); onData sees output as it comes */
  run(cmd: string, onData?: (chunk: string) => void): Promise<{ out: string; code: number | null }>;
  end(): void;
}

/** A plain ssh2 client, independent of the pool under test. */
function sshTo(h: TestHost): Promise<Session> {
  return new Promise((resolve, reject) => {
    const c = new Client();
    let fingerprint = '';
    c.on('ready', () =>
      resolve({
        fingerprint,
        end: () => c.end(),
        run: (cmd, onData) =>
          new Promise((res, rej) => {
            c.exec(cmd, (err, ch) => {
              if (err) return rej(err);
              let out = '';
              const take = (d: Buffer): void => {
                out += d.toString();
                onData?.(d.toString());
              };
              ch.on('data', take);
              ch.stderr.on('data', take);
              ch.on('close', (code: number | undefined) => res({ out, code: code ?? null }));
            });
          }),
      }),
    );
    c.on('error', reject);
    c.on('close', () => reject(new Error('connection closed')));
    c.connect({
      host: h.address,
      port: h.port,
      username: h.user,
      privateKey: h.privateKey,
      readyTimeout: 5_000,
      hostVerifier: (key: Buffer) => {
        fingerprint = `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
        return true;
      },
    });
  });
}

describe('test image', () => {
  it('builds idempotently and runs busybox applets', async () => {
    expect(await dockerAvailable()).toBe(true);
    const [a, b] = await Promise.all([ensureTestImage(), ensureTestImage()]);
    expect(a).toBe('gpufleet-test/busybox:latest');
    expect(b).toBe(a);
    const { stdout } = await runDocker(['run', '--rm', a, 'echo', 'hi']);
    expect(stdout).toBe('hi\n');
    const tools = await runDocker(['run', '--rm', a, 'sh', '-c', 'for t in sleep env cat nc httpd wget; do command -v $t; done']);
    expect(tools.stdout.trim().split('\n')).toHaveLength(6);
  });

  it('has a distinct alternative tag', async () => {
    const alt = await ensureAltTestImage();
    const ids = await runDocker(['image', 'inspect', '--format', '{{.Id}}', await ensureTestImage(), alt]);
    const [x, y] = ids.stdout.trim().split('\n');
    expect(x).not.toBe(y);
    const { stdout } = await runDocker(['run', '--rm', alt, 'cat', '/etc/gpufleet-image']);
    expect(stdout).toBe('alt\n');
  });
});

describe('docker helpers', () => {
  it('inspect, list and remove containers by label (on the nvidia = runc runtime)', async () => {
    const label = `gpufleet.test.harness=${process.pid}-${Date.now()}`;
    const img = await ensureTestImage();
    const { stdout } = await runDocker(['run', '-d', '--runtime', 'nvidia', '--label', label, img, 'sleep', '30']);
    const id = stdout.trim();
    const listed = await listContainers(label);
    expect(listed.map((c) => c.Id)).toEqual([id]);
    const info = await dockerInspect(id);
    expect(info?.HostConfig.Runtime).toBe('nvidia');
    expect(info?.State.Running).toBe(true);
    expect(info?.Config.Labels).toMatchObject({ [label.split('=')[0] as string]: label.split('=')[1] });
    expect(await removeContainersByLabel(label)).toBe(1);
    expect(await dockerInspect(id)).toBeNull();
    expect(await listContainers(label)).toEqual([]);
  });
});

describe('test hosts', () => {
  let gpu: TestHost;
  let cpu: TestHost;
  beforeAll(async () => {
    gpu = await startTestHost({ name: 'gpu-a', gpus: [FIXTURE_GPUS.H100_80GB_HBM3, { ...FIXTURE_GPUS.H100_80GB_HBM3, utilizationGpu: 42 }] });
    cpu = await startTestHost({ name: 'cpu-a' });
  });
  afterAll(async () => {
    await gpu?.dispose();
    await cpu?.dispose();
  });

  it('are distinct real sshd servers accepting their key', async () => {
    expect(gpu.address).not.toBe(cpu.address);
    expect(gpu.address).toMatch(/^127\.0\.0\.\d+$/);
    const s = await sshTo(gpu);
    expect(s.fingerprint).toBe(gpu.hostKeyFingerprint);
    const r = await s.run('id -u; echo $SSH_CONNECTION');
    expect(r.out).toContain(`0\n`);
    expect(r.out).toContain(`${gpu.address} ${gpu.port}`);
    s.end();
  });

  it('reject a key they do not authorize', async () => {
    const other = { ...cpu, privateKey: gpu.privateKey } as TestHost;
    await expect(sshTo(other)).rejects.toThrow(/authentication/i);
  });

  it('serve the fixture nvidia-smi on GPU hosts only', async () => {
    const s = await sshTo(gpu);
    const inv = await s.run('nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version --format=csv,noheader,nounits');
    expect(inv.code).toBe(0);
    expect(inv.out).toBe(
      `0, ${fixtureGpuUuid('gpu-a', 0)}, NVIDIA H100 80GB HBM3, 81559, 550.54.15\n` +
        `1, ${fixtureGpuUuid('gpu-a', 1)}, NVIDIA H100 80GB HBM3, 81559, 550.54.15\n`,
    );
    const util = await s.run('nvidia-smi --query-gpu=index,uuid,utilization.gpu,utilization.memory --format=csv,noheader,nounits');
    expect(util.out.split('\n')[1]).toBe(`1, ${fixtureGpuUuid('gpu-a', 1)}, 42, 0`);
    const table = await s.run('nvidia-smi');
    expect(table.out).toMatch(/\| NVIDIA-SMI 550\.54\.15 +Driver Version: 550\.54\.15 +CUDA Version: 12\.4 +\|/);
    s.end();

    const c = await sshTo(cpu);
    const none = await c.run('nvidia-smi');
    expect(none.code).toBe(127);
    // every test host drives this machine's one engine
    const engine = await c.run("docker info --format '{{.ServerVersion}}'");
    expect(engine.code).toBe(0);
    c.end();
  });

  it('stop() makes the host unreachable and start() brings it back with the same key', async () => {
    const s = await sshTo(cpu);
    const before = cpu.hostKeyFingerprint;
    let started: () => void = () => undefined;
    const running = new Promise<void>((r) => (started = r));
    const longCmd = s.run('echo started; sleep 30', (d) => d.includes('started') && started());
    await running;
    await cpu.stop();
    expect(cpu.running).toBe(false);
    // established sessions die with the host, not just the listener
    expect((await longCmd).code).toBeNull();
    await expect(sshTo(cpu)).rejects.toThrow(/ECONNREFUSED/);
    await cpu.start();
    const again = await sshTo(cpu);
    expect(again.fingerprint).toBe(before);
    expect((await again.run('echo back')).out).toBe('back\n');
    again.end();
  });

  it('pause() hangs the host (TCP accepts, SSH is silent) until resume()', async () => {
    const s = await sshTo(cpu);
    await cpu.pause();
    const stuck = await Promise.race([s.run('echo hi').then(() => 'answered'), sleep(700).then(() => 'silent')]);
    expect(stuck).toBe('silent');
    await cpu.resume();
    expect((await s.run('echo hi')).out).toBe('hi\n');
    s.end();
  });

  it('rotateHostKey() changes the fingerprint the host presents', async () => {
    const before = cpu.hostKeyFingerprint;
    await cpu.rotateHostKey();
    expect(cpu.hostKeyFingerprint).not.toBe(before);
    const s = await sshTo(cpu);
    expect(s.fingerprint).toBe(cpu.hostKeyFingerprint);
    s.end();
  });
});

describe('docker run gate', () => {
  let h: TestHost;
  const name = `gpufleet-gate-${process.pid}`;
  beforeAll(async () => {
    await ensureTestImage();
    h = await startTestHost({ name: 'gated', dockerRunGate: true });
  });
  afterAll(async () => {
    await h?.dispose();
    await runDocker(['rm', '-f', name]).catch(() => undefined);
  });

  it('is absent unless asked for', async () => {
    const plain = await startTestHost({ name: 'ungated' });
    try {
      expect(plain.dockerRunGate).toBeNull();
      const s = await sshTo(plain);
      expect((await s.run('command -v docker')).out).not.toContain(plain.dir);
      s.end();
    } finally {
      await plain.dispose();
    }
  });

  it('holds docker run over SSH until released, lets other docker commands through, and keeps stdin', async () => {
    const gate = h.dockerRunGate!;
    const s = await sshTo(h);
    await gate.hold();
    let finished = false;
    const img = await ensureTestImage();
    const runCmd = s.run(`printf 'K=v w\\n' | docker run --rm --name=${name} --env-file /dev/stdin ${img} sh -c 'echo "[$K]"'`).then((r) => {
      finished = true;
      return r;
    });
    expect(await gate.waitHeld(1)).toEqual([name]);
    // other commands are not held, and the held run has not reached the engine
    expect((await s.run("docker version --format '{{.Client.Version}}'")).code).toBe(0);
    await sleep(300);
    expect(finished).toBe(false);
    expect(await dockerInspect(name)).toBeNull();
    await gate.release();
    const r = await runCmd;
    expect(r).toEqual({ out: '[v w]\n', code: 0 });
    // released: the next run goes straight through
    expect((await s.run(`docker run --rm ${img} echo through`)).out).toBe('through\n');
    expect(await gate.held()).toEqual([name]);
    s.end();
  });
});
