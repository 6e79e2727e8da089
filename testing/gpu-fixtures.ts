// GPU fault fixtures of a test host (docs/gpu-health.md): `journalctl` or `dmesg`, and `dcgmi`, first on
// the host's PATH beside the fixture `nvidia-smi`, each reading what the test wrote into a file of that
// host's own, so a test makes one host's GPU fail and nothing else:
//   kernelLine(text)     appends a kernel line (its monotonic time is this machine's uptime now, as the
//                        kernel would stamp it) to the log the host's journalctl/dmesg follow
//   setGpuField(i, f, v) nvidia-smi answers `v` for GPU i's field f (null: the default again)
//   hideGpu(i)           nvidia-smi no longer lists GPU i; smiMode('fail' | 'hang') makes every call fail / hang
//   dcgmi('pass' | 'fail' | null)  what `dcgmi diag` finds (null: DCGM is not installed)
// Kernel log: `journal` installs a journalctl that follows `journal.jsonl` (its cursor `s=fixture;i=<line>`);
// `dmesg` installs a dmesg that prints `kmsg` (`--raw` form) and follows it, and a journalctl that fails
// as on a host without journald.
import { chmod, mkdir, readFile, rename, rm, writeFile, appendFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type KernelLogSource = 'journal' | 'dmesg';

export interface GpuFixtures {
  readonly source: KernelLogSource;
  readonly stateDir: string;
  kernelLine(text: string): Promise<void>;
  setGpuField(index: number, field: string, value: string | number | null): Promise<void>;
  hideGpu(index: number, hidden?: boolean): Promise<void>;
  smiMode(mode: 'ok' | 'fail' | 'hang'): Promise<void>;
  dcgmi(result: 'pass' | 'fail' | null): Promise<void>;
  /** the argument lines dcgmi was called with, oldest first */
  dcgmiCalls(): Promise<string[]>;
  /** how many times the kernel log was followed (`journalctl -f` / `dmesg --follow` started): one per watch session */
  follows(): Promise<number>;
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

async function install(binDir: string, name: string, script: string): Promise<void> {
  const target = join(binDir, name);
  const tmp = `${target}.${process.pid}.tmp`;
  await writeFile(tmp, script);
  await chmod(tmp, 0o755);
  await rename(tmp, target);
}

/** this machine's boot id and uptime (µs): what the host's kernel log is stamped with */
export function kernelClock(): { bootId: string; uptimeUs: number } {
  const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const uptimeUs = Math.round(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1e6);
  return { bootId, uptimeUs };
}

export async function installGpuFixtures(hostDir: string, binDir: string, source: KernelLogSource): Promise<GpuFixtures> {
  const dir = join(hostDir, 'gpu-fixtures');
  const stateDir = join(dir, 'smi');
  await mkdir(stateDir, { recursive: true });
  const journal = join(dir, 'journal.jsonl');
  const kmsg = join(dir, 'kmsg');
  await writeFile(journal, '');
  await writeFile(kmsg, '');
  if (source === 'journal') {
    await install(binDir, 'journalctl', `#!/bin/sh
# test harness (testing/gpu-fixtures.ts): journalctl -k [-f] -o json [--after-cursor=s=fixture;i=N]
J=${sq(journal)}; follow=0; after=
for a; do case "$a" in -f|--follow) follow=1 ;; --after-cursor=*) after=\${a#--after-cursor=} ;; esac; done
[ $follow = 1 ] || exec tail -n 1 "$J"
echo "$$" >> ${sq(join(dir, 'follows'))}
start=1
if [ -n "$after" ]; then i=\${after##*i=}; i=\${i%%;*}; start=$((i + 1)); fi
exec tail -n +$start -F "$J" 2>/dev/null
`);
  } else {
    await install(binDir, 'journalctl', '#!/bin/sh\necho "No journal files were found." >&2\nexit 1\n');
    await install(binDir, 'dmesg', `#!/bin/sh
# test harness (testing/gpu-fixtures.ts): dmesg [--follow] --raw
K=${sq(kmsg)}; follow=0
for a; do case "$a" in -w|--follow) follow=1 ;; esac; done
if [ $follow = 1 ]; then echo "$$" >> ${sq(join(dir, 'follows'))}; exec tail -n +1 -F "$K" 2>/dev/null; fi
exec cat "$K"
`);
  }
  const calls = join(dir, 'dcgmi.calls');
  const result = join(dir, 'dcgmi.result');
  let lines = 0;
  const fixtures: GpuFixtures = {
    source,
    stateDir,
    async kernelLine(text) {
      const { bootId, uptimeUs } = kernelClock();
      if (source === 'journal') {
        lines++;
        const rec = { __CURSOR: `s=fixture;i=${lines};b=${bootId.replace(/-/g, '')}`, _BOOT_ID: bootId.replace(/-/g, ''), _SOURCE_MONOTONIC_TIMESTAMP: String(uptimeUs), __MONOTONIC_TIMESTAMP: String(uptimeUs), _TRANSPORT: 'kernel', MESSAGE: text };
        await appendFile(journal, `${JSON.stringify(rec)}\n`);
      } else {
        const secs = (uptimeUs / 1e6).toFixed(6);
        await appendFile(kmsg, `<3>[${secs.padStart(12)}] ${text}\n`);
      }
    },
    async setGpuField(index, field, value) {
      await mkdir(join(stateDir, String(index)), { recursive: true });
      const f = join(stateDir, String(index), field);
      if (value === null) await rm(f, { force: true });
      else await writeFile(f, String(value));
    },
    async hideGpu(index, hidden = true) {
      await mkdir(join(stateDir, String(index)), { recursive: true });
      const f = join(stateDir, String(index), 'missing');
      if (hidden) await writeFile(f, '');
      else await rm(f, { force: true });
    },
    async smiMode(mode) {
      await rm(join(stateDir, 'fail'), { force: true });
      await rm(join(stateDir, 'hang'), { force: true });
      if (mode !== 'ok') await writeFile(join(stateDir, mode), '');
    },
    async dcgmi(r) {
      if (r === null) return void (await rm(join(binDir, 'dcgmi'), { force: true }));
      await writeFile(result, r);
      await install(binDir, 'dcgmi', dcgmiScript(calls, result));
    },
    async follows() {
      return (await readFile(join(dir, 'follows'), 'utf8').catch(() => '')).split('\n').filter((l) => l.length > 0).length;
    },
    async dcgmiCalls() {
      return (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter((l) => l.length > 0);
    },
  };
  // the kernel's first line of the boot, as every journal has it (the watch script reads journald only when it has one)
  if (source === 'journal') await fixtures.kernelLine('Linux version 6.8.0-fixture (gpufleet test host)');
  return fixtures;
}

/** `dcgmi diag -r <level> [-i <gpus>] -j`: DCGM 3's JSON, every test passing, or the memory test failing on GPU 0. */
function dcgmiScript(calls: string, result: string): string {
  const test = (name: string, status: string, extra = '') => `{"name":"${name}","results":[{"gpu_id":"0","status":"${status}"${extra}}]}`;
  const doc = (memory: string) =>
    `{"DCGM GPU Diagnostic":{"test_categories":[{"category":"Deployment","tests":[${test('Denylist', 'Pass')},${test('NVML Library', 'Pass')},${test('Page Retirement/Row Remap', 'Pass')}]},{"category":"Hardware","tests":[${memory}]}]},"version":"3.3.5"}`;
  const pass = doc(test('GPU Memory', 'Pass'));
  const fail = doc(test('GPU Memory', 'Fail', ',"warnings":[{"error_id":83,"warning":"Pending page retirements together with a DBE were detected on GPU 0."}]'));
  return `#!/bin/sh
# test harness (testing/gpu-fixtures.ts): dcgmi diag, its result from a file the test writes
echo "$*" >> ${sq(calls)}
[ "$1" = diag ] || { echo "fixture dcgmi: only diag" >&2; exit 2; }
if [ "$(cat ${sq(result)} 2>/dev/null)" = fail ]; then
  echo ${sq(fail)}; exit 226
fi
echo ${sq(pass)}
`;
}
