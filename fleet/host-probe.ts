// Learning a host's facts over SSH. One round trip: a POSIX shell script prints delimited sections
// (`@@gpufleet <name>` … `@@gpufleet-rc <code>`), and pure parsers turn them into HostFacts. No SSH here:
// the caller passes `run`, so tests drive it with a local shell and the real pool reuses it unchanged.
import { GpufleetError } from '../model/index.ts';
import type { HostFacts, HostGpu } from '../model/index.ts';
import { resolveGpuType } from './gpu-catalog.ts';

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}
export type RemoteRun = (cmd: string) => Promise<RunResult>;

export type HostRequirement = 'docker' | 'docker-access' | 'nvidia-runtime' | 'nvidia-driver';

const GPU_QUERY = 'nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version --format=csv,noheader,nounits';

/** Per-GPU utilisation, for pod `runtime.gpus`; parse with `parseGpuMetrics`. */
export const GPU_METRICS_COMMAND =
  'nvidia-smi --query-gpu=index,uuid,utilization.gpu,utilization.memory --format=csv,noheader,nounits';

// `e $?` reads the status of the command just before it. The newline before the rc marker keeps it on
// its own line when output lacks a trailing newline. Docker is asked once; its root dir is cut out of
// the same JSON with sed, so df needs no second `docker info` (which can take a second on a busy host).
export const PROBE_SCRIPT = `export LC_ALL=C
s() { printf '@@gpufleet %s\\n' "$1"; }
e() { printf '\\n@@gpufleet-rc %s\\n' "$1"; }
s arch; uname -m 2>&1; e $?
s nproc; (nproc 2>/dev/null || getconf _NPROCESSORS_ONLN) 2>&1; e $?
s cpumodel; grep -m1 -i '^model name' /proc/cpuinfo 2>/dev/null; (lscpu 2>/dev/null | grep -m1 '^Model name:'); e 0
s meminfo; grep '^MemTotal:' /proc/meminfo 2>&1; e $?
if command -v docker >/dev/null 2>&1; then
  out=$(docker info --format '{{json .}}' 2>&1); rc=$?
  s docker; printf '%s' "$out"; e $rc
  root=$(printf '%s' "$out" | sed -n 's/.*"DockerRootDir":"\\([^"]*\\)".*/\\1/p')
  [ -n "$root" ] && [ -d "$root" ] || root=/
  s df; df -Pk "$root" 2>&1; e $?
else
  s docker-missing; e 127
fi
s addrs; ip -o -4 addr show 2>&1; e $?
s pools; grep -o '"base"[^,}]*' /etc/docker/daemon.json 2>/dev/null; e 0
if command -v nvidia-smi >/dev/null 2>&1; then
  s gpus; ${GPU_QUERY} 2>&1; e $?
  s smi; nvidia-smi 2>&1 | head -n 8; e 0
fi
exit 0
`;

/** The probe wrapped in `sh -c`, so a login shell of fish or zsh does not matter. */
export function probeCommand(): string {
  return `sh -c ${shellQuote(PROBE_SCRIPT)}`;
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface ProbeSection {
  body: string;
  code: number;
}

/** Split the script's output into named sections. Text outside a section (motd noise) is ignored. */
export function splitSections(stdout: string): Map<string, ProbeSection> {
  const out = new Map<string, ProbeSection>();
  let name: string | null = null;
  let lines: string[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const start = /^@@gpufleet (\S+)$/.exec(line);
    const end = /^@@gpufleet-rc (\d+)$/.exec(line);
    if (start) {
      name = start[1]!;
      lines = [];
    } else if (end && name !== null) {
      out.set(name, { body: lines.join('\n').replace(/\n+$/, ''), code: Number(end[1]) });
      name = null;
    } else if (name !== null) {
      lines.push(line);
    }
  }
  return out;
}

function requirement(req: HostRequirement, detail: string, extra: Record<string, unknown> = {}): GpufleetError {
  return new GpufleetError('HOST_REQUIREMENT', detail, { fields: { requirement: req, ...extra } });
}

export interface DockerInfo {
  serverVersion: string;
  rootDir: string;
  runtimes: string[];
}

/**
 * Parse `docker info --format '{{json .}}'` output (stdout and stderr together). The CLI prints a JSON
 * object with empty server fields plus an error line when it cannot reach the daemon, so errors are
 * recognised from the text first and an empty ServerVersion is treated as "no daemon" too.
 */
export function parseDockerInfo(text: string): DockerInfo {
  if (/permission denied while trying to connect to the docker daemon/i.test(text)) {
    throw requirement(
      'docker-access',
      'the SSH user cannot reach the Docker daemon (permission denied on /var/run/docker.sock); ' +
        'add the user to the docker group (`sudo usermod -aG docker <user>`) and reconnect',
      { output: firstErrorLine(text) },
    );
  }
  const jsonLine = text.split('\n').find((l) => l.trimStart().startsWith('{'));
  let info: Record<string, unknown> = {};
  if (jsonLine !== undefined) {
    try {
      info = JSON.parse(jsonLine) as Record<string, unknown>;
    } catch {
      info = {};
    }
  }
  const serverErrors = Array.isArray(info['ServerErrors']) ? (info['ServerErrors'] as unknown[]).map(String) : [];
  const serverVersion = typeof info['ServerVersion'] === 'string' ? info['ServerVersion'] : '';
  if (serverErrors.length > 0 || serverVersion === '') {
    const why = serverErrors[0] ?? firstErrorLine(text);
    throw requirement('docker', `the Docker daemon is not reachable on the host: ${why || 'no server information'}`, {
      output: why,
    });
  }
  const runtimes = info['Runtimes'];
  return {
    serverVersion,
    rootDir: typeof info['DockerRootDir'] === 'string' ? info['DockerRootDir'] : '/var/lib/docker',
    runtimes: runtimes && typeof runtimes === 'object' ? Object.keys(runtimes).sort() : [],
  };
}

function firstErrorLine(text: string): string {
  return (text.split('\n').find((l) => l.trim() !== '' && !l.trimStart().startsWith('{')) ?? '').trim();
}

const KIB_PER_GIB = 1024 * 1024;

/** `/proc/meminfo` MemTotal (kB) → whole GiB, rounded down so we never promise memory the host lacks. */
export function parseMemTotalGb(text: string): number {
  const m = /MemTotal:\s+(\d+)\s*kB/i.exec(text);
  return m ? Math.floor(Number(m[1]) / KIB_PER_GIB) : 0;
}

/** `df -Pk <path>`: the Available column of the last line (1 KiB blocks) → whole GiB, rounded down. */
export function parseDfAvailableGb(text: string): number {
  const rows = text.split('\n').filter((l) => /\d/.test(l) && !/^Filesystem/i.test(l));
  const last = rows[rows.length - 1];
  if (last === undefined) return 0;
  const cols = last.trim().split(/\s+/);
  // POSIX format: Filesystem, 1024-blocks, Used, Available, Capacity, Mounted on (the device name
  // never has spaces in practice; counting from the end would break on mount points with spaces).
  const avail = Number(cols[3]);
  return Number.isFinite(avail) ? Math.floor(avail / KIB_PER_GIB) : 0;
}

export function parseCpuModel(text: string): string {
  for (const line of text.split('\n')) {
    const m = /^(?:model name|Model name)\s*:\s*(.+)$/i.exec(line.trim());
    if (m && m[1]!.trim() !== '') return m[1]!.replace(/\s+/g, ' ').trim();
  }
  return 'unknown';
}

/** `CUDA Version: 12.4` from plain nvidia-smi; this is the newest CUDA the driver supports. */
export function cudaVersionFromNvidiaSmi(text: string): string | null {
  const m = /CUDA Version:\s*(\d+\.\d+)/.exec(text);
  return m ? m[1]! : null;
}

function splitCsvRow(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

/** Parse the `--query-gpu=index,uuid,name,memory.total,driver_version` csv (noheader, nounits). */
export function parseGpuCsv(csv: string): { gpus: HostGpu[]; driverVersion: string | null } {
  const gpus: HostGpu[] = [];
  let driverVersion: string | null = null;
  for (const line of csv.split('\n')) {
    if (line.trim() === '') continue;
    const cols = splitCsvRow(line);
    if (cols.length < 5 || !/^\d+$/.test(cols[0]!)) {
      throw new GpufleetError('SSH_COMMAND_FAILED', `unexpected nvidia-smi output line: ${line.trim()}`, {
        fields: { output: line },
      });
    }
    // A GPU name never holds a comma, but be safe: the name is everything between uuid and the last two.
    const name = cols.slice(2, cols.length - 2).join(', ');
    const mem = Number(cols[cols.length - 2]);
    driverVersion ??= cols[cols.length - 1] || null;
    gpus.push({
      index: Number(cols[0]),
      uuid: cols[1]!,
      name,
      memoryMiB: Number.isFinite(mem) ? mem : 0,
      typeId: resolveGpuType(name)?.id ?? null,
    });
  }
  gpus.sort((a, b) => a.index - b.index);
  return { gpus, driverVersion };
}

export interface GpuMetric {
  index: number;
  uuid: string;
  /** percent 0-100; null when nvidia-smi reports [N/A] (MIG, some vGPUs) */
  util: number | null;
  memoryUtil: number | null;
}

/** Parse `GPU_METRICS_COMMAND` output. */
export function parseGpuMetrics(csv: string): GpuMetric[] {
  const pct = (v: string | undefined): number | null => {
    if (v === undefined || !/^\d+(\.\d+)?$/.test(v)) return null;
    return Math.max(0, Math.min(100, Math.round(Number(v))));
  };
  const out: GpuMetric[] = [];
  for (const line of csv.split('\n')) {
    if (line.trim() === '') continue;
    const cols = splitCsvRow(line);
    if (!/^\d+$/.test(cols[0] ?? '')) continue;
    out.push({ index: Number(cols[0]), uuid: cols[1] ?? '', util: pct(cols[2]), memoryUtil: pct(cols[3]) });
  }
  return out;
}

/**
 * `ip -o -4 addr show`: the host's IPv4 addresses with their prefix, except those on gpufleet's own
 * overlay devices (`gfo…`, docs/networking.md), which hold overlay addresses by design.
 */
export function parseIpv4Addresses(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+(\d+\.\d+\.\d+\.\d+\/\d+)/.exec(line);
    if (m && !m[1]!.startsWith('gfo')) out.push(m[2]!);
  }
  return out;
}

/** Turn the probe script's output into HostFacts, or the first unmet host requirement. */
export function parseProbeOutput(stdout: string): HostFacts {
  const sec = splitSections(stdout);
  const body = (name: string): string => sec.get(name)?.body ?? '';
  if (!sec.has('arch')) {
    throw new GpufleetError('SSH_COMMAND_FAILED', 'host probe produced no output sections', {
      fields: { output: stdout.slice(0, 2000) },
    });
  }
  if (sec.has('docker-missing')) {
    throw requirement('docker', 'Docker is not installed on the host (no `docker` command in the SSH user\'s PATH); install Docker Engine and enroll again');
  }
  const docker = parseDockerInfo(body('docker'));

  let gpus: HostGpu[] = [];
  let driverVersion: string | null = null;
  let cudaVersion: string | null = null;
  const gpuSec = sec.get('gpus');
  if (gpuSec) {
    if (gpuSec.code === 0) {
      ({ gpus, driverVersion } = parseGpuCsv(gpuSec.body));
    } else if (!/no devices were found/i.test(gpuSec.body)) {
      // nvidia-smi is installed but cannot talk to the driver: enrolling as CPU-only would hide the GPUs.
      throw requirement('nvidia-driver', `nvidia-smi is installed but failed: ${gpuSec.body.split('\n')[0] ?? ''}`.trim(), {
        output: gpuSec.body,
      });
    }
    cudaVersion = cudaVersionFromNvidiaSmi(body('smi'));
    driverVersion ??= /Driver Version:\s*([\d.]+)/.exec(body('smi'))?.[1] ?? null;
  }
  if (gpus.length > 0 && !docker.runtimes.includes('nvidia')) {
    throw requirement(
      'nvidia-runtime',
      `the host has ${gpus.length} NVIDIA GPU(s) but Docker has no "nvidia" runtime (runtimes: ${docker.runtimes.join(', ') || 'none'}); ` +
        'install the NVIDIA Container Toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker',
      { runtimes: docker.runtimes },
    );
  }

  const cpuCount = Number.parseInt(body('nproc'), 10);
  const net = sec.get('addrs')?.code === 0 ? { addresses: parseIpv4Addresses(body('addrs')) } : {};
  return {
    ...net,
    dockerPools: [...body('pools').matchAll(/(\d+\.\d+\.\d+\.\d+\/\d+)/g)].map((m) => m[1]!),
    arch: body('arch').trim() || 'unknown',
    cpuCount: Number.isFinite(cpuCount) ? cpuCount : 0,
    cpuModel: parseCpuModel(body('cpumodel')),
    memoryGb: parseMemTotalGb(body('meminfo')),
    diskFreeGb: parseDfAvailableGb(body('df')),
    dockerVersion: docker.serverVersion,
    dockerRuntimes: docker.runtimes,
    driverVersion,
    cudaVersion,
    gpus,
  };
}

/** Run the probe through `run` (one round trip) and return the host's facts. */
export async function probeHost(run: RemoteRun): Promise<HostFacts> {
  const res = await run(probeCommand());
  if (!res.stdout.includes('@@gpufleet arch')) {
    throw new GpufleetError('SSH_COMMAND_FAILED', `host probe failed (exit ${res.code}): ${res.stderr.trim().slice(0, 500)}`, {
      fields: { code: res.code, stderr: res.stderr },
    });
  }
  return parseProbeOutput(res.stdout);
}
