import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GpufleetError } from '../../model/base/errors.ts';
import {
  GPU_METRICS_COMMAND,
  type RemoteRun,
  cudaVersionFromNvidiaSmi,
  parseDfAvailableGb,
  parseDockerInfo,
  parseGpuCsv,
  parseGpuMetrics,
  parseProbeOutput,
  probeHost,
  splitSections,
} from '../../fleet/host-probe.ts';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string): string => readFileSync(join(FIX, name), 'utf8');

function requirementOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(GpufleetError);
    expect((e as GpufleetError).code).toBe('HOST_REQUIREMENT');
    return (e as GpufleetError).fields['requirement'] as string;
  }
  throw new Error('expected a HOST_REQUIREMENT error');
}

describe('parsers on fixture output', () => {
  it('turns a full 8×H100 probe into HostFacts', () => {
    const facts = parseProbeOutput(fixture('probe-8xh100.txt'));
    expect(facts).toMatchObject({
      arch: 'x86_64',
      cpuCount: 208,
      cpuModel: 'Intel(R) Xeon(R) Platinum 8480+',
      memoryGb: 2015, // 2113278248 kB rounded down to GiB
      diskFreeGb: 26313, // 27591424780 KiB available, rounded down to GiB
      dockerVersion: '26.1.3',
      dockerRuntimes: ['io.containerd.runc.v2', 'nvidia', 'runc'],
      driverVersion: '550.54.15',
      cudaVersion: '12.4',
    });
    expect(facts.gpus).toHaveLength(8);
    expect(facts.gpus.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(facts.gpus.map((g) => g.uuid)).size).toBe(8);
    for (const g of facts.gpus) {
      expect(g).toMatchObject({ name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559, typeId: 'NVIDIA H100 80GB HBM3' });
      expect(g.uuid).toMatch(/^GPU-[0-9a-f-]{36}$/);
    }
  });

  it('ignores login noise around the sections', () => {
    const noisy = `Welcome to Ubuntu 22.04.4 LTS\n * Documentation:  https://help.ubuntu.com\n${fixture('probe-8xh100.txt')}\nlogout\n`;
    expect(parseProbeOutput(noisy).gpus).toHaveLength(8);
  });

  it('reads the CUDA version from the nvidia-smi banner', () => {
    expect(cudaVersionFromNvidiaSmi(fixture('nvidia-smi-header.txt'))).toBe('12.4');
    expect(cudaVersionFromNvidiaSmi('| NVIDIA-SMI 570.86.15   Driver Version: 570.86.15   CUDA Version: 12.10 |')).toBe('12.10');
    expect(cudaVersionFromNvidiaSmi('no banner')).toBeNull();
  });

  it('maps unknown GPU names to typeId null and keeps them', () => {
    const { gpus } = parseGpuCsv('0, GPU-aaaa, NVIDIA Quantum Whatever 12GB, 12288, 560.1\n');
    expect(gpus[0]).toMatchObject({ name: 'NVIDIA Quantum Whatever 12GB', typeId: null, memoryMiB: 12288 });
  });

  it('reads df -Pk available space in GiB', () => {
    const df = 'Filesystem     1024-blocks      Used Available Capacity Mounted on\n/dev/nvme0n1p2  1921802432 404567620 1419583612      23% /var/lib/docker\n';
    expect(parseDfAvailableGb(df)).toBe(1353);
  });

  it('parses GPU utilisation and maps [N/A] to null', () => {
    expect(GPU_METRICS_COMMAND).toContain('utilization.gpu,utilization.memory');
    expect(parseGpuMetrics(fixture('nvidia-smi-metrics.csv'))).toEqual([
      { index: 0, uuid: 'GPU-5b2c1f3e-8a4d-9c1e-7f20-3d6b8e4a1c90', util: 97, memoryUtil: 61 },
      { index: 1, uuid: 'GPU-0e7a9d52-3b61-4f8e-a2c4-91d57f6e3b28', util: 0, memoryUtil: 0 },
      { index: 2, uuid: 'GPU-c41f8b07-6d2e-8a95-1b3f-e07c2d49a615', util: null, memoryUtil: null },
      { index: 3, uuid: 'GPU-9a3e6c18-f570-2d4b-8e61-5c0b7a93d2f4', util: 100, memoryUtil: 88 },
    ]);
  });

  it('recognises permission denied on the Docker socket (as the CLI prints it)', () => {
    const merged = fixture('docker-info-denied.json') + '\n' + fixture('docker-permission-denied.txt');
    expect(requirementOf(() => parseDockerInfo(merged))).toBe('docker-access');
    expect(requirementOf(() => parseDockerInfo(fixture('docker-permission-denied.txt')))).toBe('docker-access');
  });

  it('treats an empty server section as an unreachable daemon', () => {
    const text = fixture('docker-info-denied.json') +
      '\nCannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n';
    let err: GpufleetError | undefined;
    try {
      parseDockerInfo(text);
    } catch (e) {
      err = e as GpufleetError;
    }
    expect(err?.fields['requirement']).toBe('docker');
    expect(err?.message).toContain('Is the docker daemon running?');
  });

  it('lists Docker runtimes', () => {
    expect(parseDockerInfo(fixture('docker-info-no-nvidia.json')).runtimes).toEqual(['io.containerd.runc.v2', 'runc']);
  });
});

// ---- the real probe script, run by a real /bin/sh with fake docker / nvidia-smi on PATH ---------------

const sandboxes: string[] = [];
afterAll(() => {
  for (const d of sandboxes) rmSync(d, { recursive: true, force: true });
});

interface FakeHost {
  docker?: { stdout: string; stderr?: string; code?: number };
  nvidiaSmi?: { query: string; banner: string; code?: number };
}

/** A PATH holding only the tools the probe uses, plus the fakes; runs commands like an SSH exec would. */
function fakeHost(spec: FakeHost): { run: RemoteRun; calls: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'gpufleet-probe-'));
  sandboxes.push(dir);
  for (const tool of ['sh', 'uname', 'nproc', 'getconf', 'grep', 'lscpu', 'df', 'head', 'sed']) {
    for (const base of ['/usr/bin', '/bin']) {
      if (existsSync(join(base, tool))) {
        symlinkSync(join(base, tool), join(dir, tool));
        break;
      }
    }
  }
  const script = (name: string, body: string): void => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  if (spec.docker) {
    writeFileSync(join(dir, 'docker.out'), spec.docker.stdout);
    writeFileSync(join(dir, 'docker.err'), spec.docker.stderr ?? '');
    script('docker', `/bin/cat "${dir}/docker.out"; /bin/cat "${dir}/docker.err" >&2; exit ${spec.docker.code ?? 0}`);
  }
  if (spec.nvidiaSmi) {
    writeFileSync(join(dir, 'smi.query'), spec.nvidiaSmi.query);
    writeFileSync(join(dir, 'smi.banner'), spec.nvidiaSmi.banner);
    script(
      'nvidia-smi',
      `case "$1" in --query-gpu=*) /bin/cat "${dir}/smi.query"; exit ${spec.nvidiaSmi.code ?? 0};; esac\n/bin/cat "${dir}/smi.banner"`,
    );
  }
  const calls: string[] = [];
  const run: RemoteRun = (cmd) =>
    new Promise((resolve) => {
      calls.push(cmd);
      execFile('/bin/sh', ['-c', cmd], { env: { PATH: dir } }, (err, stdout, stderr) =>
        resolve({ stdout, stderr, code: err ? (typeof err.code === 'number' ? err.code : 1) : 0 }),
      );
    });
  return { run, calls };
}

const smi8 = { query: fixture('nvidia-smi-8xh100.csv'), banner: fixture('nvidia-smi-header.txt') };

async function probeRequirement(spec: FakeHost): Promise<GpufleetError> {
  const err = await probeHost(fakeHost(spec).run).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GpufleetError);
  expect((err as GpufleetError).code).toBe('HOST_REQUIREMENT');
  return err as GpufleetError;
}

describe('probeHost through a real shell', () => {
  it('probes a GPU host in one round trip', async () => {
    const host = fakeHost({ docker: { stdout: fixture('docker-info-nvidia.json') }, nvidiaSmi: smi8 });
    const facts = await probeHost(host.run);
    expect(host.calls).toHaveLength(1);
    expect(facts.gpus).toHaveLength(8);
    expect(facts.cudaVersion).toBe('12.4');
    expect(facts.driverVersion).toBe('550.54.15');
    expect(facts.dockerVersion).toBe('26.1.3');
    expect(facts.dockerRuntimes).toContain('nvidia');
    // the rest is this machine's real answer
    expect(facts.arch).toMatch(/^(x86_64|aarch64|arm64)$/);
    expect(facts.cpuCount).toBeGreaterThan(0);
    expect(facts.memoryGb).toBeGreaterThanOrEqual(0);
    expect(facts.diskFreeGb).toBeGreaterThan(0);
    expect(facts.cpuModel).not.toBe('');
  });

  it('without nvidia-smi the host is CPU-only', async () => {
    const facts = await probeHost(fakeHost({ docker: { stdout: fixture('docker-info-no-nvidia.json') } }).run);
    expect(facts.gpus).toEqual([]);
    expect(facts.cudaVersion).toBeNull();
    expect(facts.driverVersion).toBeNull();
  });

  it('"No devices were found" is a CPU-only host too', async () => {
    const facts = await probeHost(
      fakeHost({
        docker: { stdout: fixture('docker-info-no-nvidia.json') },
        nvidiaSmi: { query: 'No devices were found\n', banner: 'No devices were found\n', code: 6 },
      }).run,
    );
    expect(facts.gpus).toEqual([]);
  });

  it('Docker not installed → requirement docker', async () => {
    const err = await probeRequirement({ nvidiaSmi: smi8 });
    expect(err.fields['requirement']).toBe('docker');
    expect(err.message).toMatch(/not installed/);
  });

  it('SSH user not in the docker group → requirement docker-access', async () => {
    const err = await probeRequirement({
      docker: { stdout: fixture('docker-info-denied.json'), stderr: fixture('docker-permission-denied.txt'), code: 1 },
      nvidiaSmi: smi8,
    });
    expect(err.fields['requirement']).toBe('docker-access');
    expect(err.message).toContain('docker group');
  });

  it('GPUs without the nvidia runtime → requirement nvidia-runtime naming the toolkit fix', async () => {
    const err = await probeRequirement({ docker: { stdout: fixture('docker-info-no-nvidia.json') }, nvidiaSmi: smi8 });
    expect(err.fields['requirement']).toBe('nvidia-runtime');
    expect(err.message).toContain('NVIDIA Container Toolkit');
    expect(err.message).toContain('nvidia-ctk runtime configure --runtime=docker');
  });

  it('nvidia-smi present but no driver → requirement nvidia-driver (not a silent CPU-only host)', async () => {
    const broken = fixture('nvidia-smi-no-driver.txt');
    const err = await probeRequirement({
      docker: { stdout: fixture('docker-info-nvidia.json') },
      nvidiaSmi: { query: broken, banner: broken, code: 9 },
    });
    expect(err.fields['requirement']).toBe('nvidia-driver');
  });

  it('a command that prints no sections is an SSH command failure', async () => {
    const err = await probeHost(async () => ({ stdout: '', stderr: 'sh: not found', code: 127 })).catch((e: unknown) => e);
    expect((err as GpufleetError).code).toBe('SSH_COMMAND_FAILED');
  });

  it('sections keep their exit codes', () => {
    const s = splitSections('@@gpufleet a\nx\n\n@@gpufleet-rc 3\n@@gpufleet b\n@@gpufleet-rc 0\n');
    expect(s.get('a')).toEqual({ body: 'x', code: 3 });
    expect(s.get('b')).toEqual({ body: '', code: 0 });
  });
});
