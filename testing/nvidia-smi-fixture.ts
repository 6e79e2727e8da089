// A fixture `nvidia-smi` (POSIX sh) that answers like the real tool for the queries gpufleet makes:
//   nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]
//   nvidia-smi --query-remapped-rows=<fields> --format=…
//   nvidia-smi --help-query-gpu   (a real driver's list, testing/fixtures/help-query-gpu.txt)
//   nvidia-smi -L
//   nvidia-smi            (the table; its header carries "CUDA Version: X.Y")
// Output formats follow driver 550: CSV values joined by ", ", units "MiB" / "%". The GPU health
// fields default to a healthy H100's (retired_pages.pending `[N/A]`, as on the real one); a test
// changes one GPU's value, hides a GPU, or makes the tool fail or hang through files in the host's
// state directory (gpu-fixtures.ts): `<state>/<index>/<field>`, `<state>/<index>/missing`,
// `<state>/fail`, `<state>/hang`.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface FixtureGpu {
  /** exactly as nvidia-smi prints it, e.g. "NVIDIA H100 80GB HBM3" */
  name: string;
  memoryMiB: number;
  /** default: derived from the host name and index (stable across runs) */
  uuid?: string;
  memoryUsedMiB?: number;
  utilizationGpu?: number;
  utilizationMemory?: number;
}

/** Names and memory.total as the real tool reports them. */
export const FIXTURE_GPUS = {
  H100_80GB_HBM3: { name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 },
  A100_SXM4_80GB: { name: 'NVIDIA A100-SXM4-80GB', memoryMiB: 81920 },
  L40S: { name: 'NVIDIA L40S', memoryMiB: 46068 },
  RTX_4090: { name: 'NVIDIA GeForce RTX 4090', memoryMiB: 24564 },
} as const satisfies Record<string, FixtureGpu>;

export interface NvidiaSmiFixture {
  hostName: string;
  gpus: FixtureGpu[];
  driverVersion: string;
  cudaVersion: string;
  /** where a test's overrides live (gpu-fixtures.ts); none: the defaults only */
  stateDir?: string;
  /** false: `--help-query-gpu` lacks the remapped_rows fields (older drivers): they are read through --query-remapped-rows */
  remappedInQueryGpu?: boolean;
}

/** `nvidia-smi --help-query-gpu` of driver 580 on an H100 (the device check's real output) */
const HELP_QUERY_GPU = readFileSync(join(fixturesDir(), 'help-query-gpu.txt'), 'utf8');

/** testing/fixtures/: beside this file in the sources, two folders up from the built dist/testing/ */
function fixturesDir(): string {
  const here = resolve(import.meta.dirname, 'fixtures');
  return existsSync(here) ? here : resolve(import.meta.dirname, '../../testing/fixtures');
}

export function fixtureGpuUuid(hostName: string, index: number): string {
  const h = createHash('sha256').update(`${hostName}:${index}`).digest('hex');
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

interface FieldValue {
  value: string;
  unit: string;
}

function gpuFields(f: NvidiaSmiFixture, g: FixtureGpu, i: number): Record<string, FieldValue> {
  const used = g.memoryUsedMiB ?? 1;
  const plain = (value: string | number): FieldValue => ({ value: String(value), unit: '' });
  return {
    index: plain(i),
    uuid: plain(g.uuid ?? fixtureGpuUuid(f.hostName, i)),
    name: plain(g.name),
    'memory.total': { value: String(g.memoryMiB), unit: 'MiB' },
    'memory.used': { value: String(used), unit: 'MiB' },
    'memory.free': { value: String(g.memoryMiB - used), unit: 'MiB' },
    driver_version: plain(f.driverVersion),
    'utilization.gpu': { value: String(g.utilizationGpu ?? 0), unit: '%' },
    'utilization.memory': { value: String(g.utilizationMemory ?? 0), unit: '%' },
    'pci.bus_id': plain(busId(i)),
    'temperature.gpu': plain(33),
    count: plain(f.gpus.length),
    // the health fields the GPU watcher polls (docs/gpu-health.md), a healthy H100's
    'ecc.errors.uncorrected.volatile.total': plain(0),
    'ecc.errors.uncorrected.aggregate.total': plain(0),
    'retired_pages.pending': plain('[N/A]'),
    'remapped_rows.pending': plain('No'),
    'remapped_rows.failure': plain('No'),
    'power.draw': { value: '71.02', unit: 'W' },
    'clocks_event_reasons.active': plain('0x0000000000000001'),
    'clocks_event_reasons.hw_thermal_slowdown': plain('Not Active'),
    'clocks_event_reasons.hw_power_brake_slowdown': plain('Not Active'),
  };
}

function busId(i: number): string {
  return `00000000:${(0x18 + i * 0x10).toString(16).toUpperCase().padStart(2, '0')}:00.0`;
}

const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The plain `nvidia-smi` table (without the leading date line, which the script prints). */
export function nvidiaSmiTable(f: NvidiaSmiFixture): string {
  const W = 89; // inner width of the 550-driver table
  const row = (s: string): string => `|${s.padEnd(W)}|`;
  const cols = (a: string, b: string, c: string): string => `|${a.padEnd(41)}|${b.padStart(24)}|${c.padStart(22)}|`;
  const lr = (l: string, r: string, w: number): string => l + ' '.repeat(Math.max(1, w - l.length - r.length)) + r;
  const sep = '+-----------------------------------------+------------------------+----------------------+';
  const lines = [
    `+${'-'.repeat(W)}+`,
    row(` NVIDIA-SMI ${f.driverVersion.padEnd(23)}Driver Version: ${f.driverVersion.padEnd(15)}CUDA Version: ${f.cudaVersion.padEnd(9)}`),
    '|-----------------------------------------+------------------------+----------------------+',
    '| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |',
    '| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |',
    '|                                         |                        |               MIG M. |',
    '|=========================================+========================+======================|',
  ];
  f.gpus.forEach((g, i) => {
    const used = g.memoryUsedMiB ?? 1;
    const name = g.name.length > 29 ? `${g.name.slice(0, 26)}...` : g.name;
    lines.push(
      cols(lr(`  ${String(i).padStart(2)}  ${name}`, 'On  ', 41), `${busId(i)} Off `, '0 '),
      cols(' N/A   33C    P0             71W /  700W ', `${used}MiB / ${`${g.memoryMiB}MiB`.padStart(9)} `, `${g.utilizationGpu ?? 0}%      Default `),
      cols('', '', 'Disabled '),
      sep,
    );
  });
  lines.push(
    '',
    `+${'-'.repeat(W)}+`,
    row(' Processes:'),
    row('  GPU   GI   CI        PID   Type   Process name                              GPU Memory'),
    row('        ID   ID                                                               Usage'),
    `|${'='.repeat(W)}|`,
    row('  No running processes found'),
    `+${'-'.repeat(W)}+`,
  );
  return lines.join('\n');
}

/** The whole fixture script. */
export function nvidiaSmiScript(f: NvidiaSmiFixture): string {
  const cases: string[] = [];
  f.gpus.forEach((g, i) => {
    for (const [k, v] of Object.entries(gpuFields(f, g, i))) {
      cases.push(`    ${i}:${k}) v=${sq(v.value)}; u=${sq(v.unit)} ;;`);
    }
  });
  const list = f.gpus
    .map((g, i) => `GPU ${i}: ${g.name} (UUID: ${g.uuid ?? fixtureGpuUuid(f.hostName, i)})`)
    .join('\n');
  const help = f.remappedInQueryGpu === false ? HELP_QUERY_GPU.replace(/^"remapped_rows[^\n]*\n[^\n]*\n\n?/gm, '') : HELP_QUERY_GPU;
  return `#!/bin/sh
# fixture nvidia-smi for gpufleet test host ${f.hostName} (generated by gpufleet/testing)
N=${f.gpus.length}
S=${sq(f.stateDir ?? '/nonexistent')}
[ -e "$S/hang" ] && exec sleep 3600
if [ -e "$S/fail" ]; then echo "Unable to determine the device handle for GPU0000:18:00.0: Unknown Error"; exit 15; fi
lookup() { # $1 gpu index, $2 field -> sets v, u; returns 1 for an unknown field
  case "$2" in gpu_bus_id) set -- "$1" pci.bus_id ;; gpu_uuid) set -- "$1" uuid ;; esac
  if [ -f "$S/$1/$2" ]; then v=$(cat "$S/$1/$2"); u=''; return 0; fi
  case "$1:$2" in
${cases.join('\n')}
    *) return 1 ;;
  esac
}
query=''; format=''; list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --help-query-gpu) cat <<'EOF_HELP'
${help}
EOF_HELP
      exit 0 ;;
    --query-remapped-rows=*) query=\${1#--query-remapped-rows=} ;;
    --query-gpu=*) query=\${1#--query-gpu=} ;;
    --query-gpu) shift; query=$1 ;;
    --format=*) format=\${1#--format=} ;;
    --format) shift; format=$1 ;;
    -L|--list-gpus) list=1 ;;
    *) echo "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."; exit 2 ;;
  esac
  shift
done
if [ $list = 1 ]; then
  cat <<'EOF_LIST'
${list}
EOF_LIST
  exit 0
fi
if [ -z "$query" ]; then
  date '+%a %b %e %H:%M:%S %Y       '
  cat <<'EOF_TABLE'
${nvidiaSmiTable(f)}
EOF_TABLE
  exit 0
fi
case ",$format," in *,csv,*) ;; *) echo "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."; exit 2 ;; esac
case ",$format," in *,noheader,*) header=0 ;; *) header=1 ;; esac
case ",$format," in *,nounits,*) units=0 ;; *) units=1 ;; esac
fields=$(printf '%s' "$query" | tr ',' ' ')
for fld in $fields; do
  lookup 0 "$fld" || { echo "Field \\"$fld\\" is not a valid field to query."; echo; exit 2; }
done
if [ $header = 1 ]; then
  line=''
  for fld in $fields; do
    lookup 0 "$fld"; h=$fld; [ -n "$u" ] && h="$fld [$u]"
    line="\${line:+$line, }$h"
  done
  printf '%s\\n' "$line"
fi
i=0
while [ $i -lt $N ]; do
  if [ -e "$S/$i/missing" ]; then i=$((i + 1)); continue; fi
  line=''
  for fld in $fields; do
    lookup $i "$fld"; val=$v
    if [ $units = 1 ] && [ -n "$u" ]; then val="$v $u"; fi
    line="\${line:+$line, }$val"
  done
  printf '%s\\n' "$line"
  i=$((i + 1))
done
`;
}
