import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { END_OF_OPTIONS, runSpec, splitArgs, type RunSpec } from '../../provisioner/container-spec.ts';
import { envArgsInput, READ_ENV_ARGS } from '../../provisioner/host-docker.ts';
import type { PodRecord } from '../../model/records/pod.ts';
import { isGpufleetError } from '../../model/base/errors.ts';
import { userOptionProblems } from '../harness/run-argv.ts';

test('args split like a shell splits words, without expansion', () => {
  expect(splitArgs(`python -m http.server 8000`)).toEqual(['python', '-m', 'http.server', '8000']);
  expect(splitArgs(`sh -c 'echo "hi there"; exit 3'`)).toEqual(['sh', '-c', 'echo "hi there"; exit 3']);
  expect(splitArgs(`a "b c" d\\ e '' $HOME`)).toEqual(['a', 'b c', 'd e', '', '$HOME']);
  expect(splitArgs('   ')).toEqual([]);
});

const base = {
  id: 'p1', accountId: 'acct1', image: 'img:1', args: 'sleep 10', env: { A: 'x\ny' }, ports: ['8888/http', '53/udp'], mounts: {},
  gpuUuids: ['GPU-a', 'GPU-b'], specGeneration: 3,
} as unknown as PodRecord;

const expectNoUserOption = (s: RunSpec, pod: PodRecord) => expect(userOptionProblems(s, pod)).toEqual([]);

test('GPU pods use the nvidia runtime with NVIDIA_VISIBLE_DEVICES, env only on stdin', () => {
  const pod = { ...base, gpu: { id: 'x', count: 2 } } as PodRecord;
  const s = runSpec(pod, 'h1', (v) => `/vol/${v}`);
  expect(s.argv).toEqual(expect.arrayContaining(['--runtime=nvidia', '--env-file=/dev/stdin', '--publish=8888/tcp', '--publish=53/udp']));
  expect(s.argv.slice(-4)).toEqual(['--', 'img:1', 'sleep', '10']);
  expect(s.envFile).toContain('NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b\n');
  expect(s.argv.join(' ')).not.toContain('A=x');
  expect(s.argv).toEqual(expect.arrayContaining(['--label=gpufleet.host=h1', '--label=gpufleet.spec=3']));
  expectNoUserOption(s, pod);
});

test('CPU pods get CPU and memory limits and no GPU from their env; mounts bind host directories', () => {
  const pod = {
    ...base, gpuUuids: [], env: { NVIDIA_VISIBLE_DEVICES: 'all' }, cpu: { id: 'cpu3c', vcpuCount: 4, memory: 8 },
    mounts: { network: [{ volumeId: 'vol1', path: '/data' }] },
  } as unknown as PodRecord;
  const s = runSpec(pod, 'h1', (v) => `/vol/${v}`);
  expect(s.argv).toEqual(expect.arrayContaining(['--cpus=4', '--memory=8g', '--volume=/vol/vol1:/data']));
  expect(s.argv.some((w) => w.includes('nvidia'))).toBe(false);
  expect(s.dirs).toEqual(['/vol/vol1']);
  expect(s.envFile).toContain('NVIDIA_VISIBLE_DEVICES=void\n');
  expect(s.envFile).not.toContain('=all');
});

test('option injection through args, env and mounts stays in its word or after the image', () => {
  const pod = {
    ...base,
    args: `--privileged --volume=/:/host -v /:/host`,
    env: { X: '--volume=/:/host', Y: '--privileged\n--volume=/:/host' },
    mounts: { persistent: { size: 10, path: '/w' } },
    ports: ['22/tcp'],
  } as unknown as PodRecord;
  const s = runSpec(pod, 'h1');
  expectNoUserOption(s, pod);
  expect(s.argv.slice(s.argv.indexOf(END_OF_OPTIONS) + 2)).toEqual(['--privileged', '--volume=/:/host', '-v', '/:/host']);
  expect(s.argv.slice(0, s.argv.indexOf(END_OF_OPTIONS)).filter((w) => w.startsWith('--volume='))).toEqual(['--volume=/var/lib/gpufleet/pods/p1:/w']);
  expect(s.envFile).toContain('X=--volume=/:/host\n');
  expect(s.envArgs).toEqual(['--env=Y=--privileged\n--volume=/:/host']);
});

test('a stored record docker must not be given (bad image, NUL, colon in a path) is refused before any argv exists', () => {
  const bad: Partial<PodRecord>[] = [
    { image: '--volume=/:/host' },
    { image: '--privileged' },
    { image: '-x' },
    { image: 'img\0:1' },
    { image: 'img:1\n' },
    { args: 'sleep\0 1' },
    { env: { A: 'a\0b' } },
    { mounts: { persistent: { size: 10, path: '/w:/etc' } } },
    { mounts: { network: [{ volumeId: '../../etc', path: '/w' }] } },
  ];
  for (const b of bad) {
    let err: unknown;
    try {
      runSpec({ ...base, ...b } as PodRecord, 'h1');
    } catch (e) {
      err = e;
    }
    expect(isGpufleetError(err) && err.code === 'VALIDATION_FAILED', JSON.stringify(b)).toBe(true);
  }
});

test('env values an env file cannot carry (line breaks, CR, long lines) go as --env words, byte for byte', () => {
  const tricky = `line1\nsaid "hi" $(id) \`id\` \\ 'q'\r\n\n`;
  const long = 'é'.repeat(20_000); // 40 000 bytes: over docker's line budget here
  const pod = { ...base, env: { T: tricky, CR: 'a\r', L: long, P: '  plain  "quoted" $HOME \\ ' } } as unknown as PodRecord;
  const s = runSpec(pod, 'h1');
  expect(s.envArgs).toEqual([`--env=T=${tricky}`, '--env=CR=a\r', `--env=L=${long}`]);
  expect(s.envFile).toContain('P=  plain  "quoted" $HOME \\ \n');
  expect(s.envFile.split('\n').filter((l) => l.startsWith('T=') || l.startsWith('CR=') || l.startsWith('L='))).toEqual([]);
});

test('the host prelude turns the stdin lines into exactly those words and leaves the env file for docker', () => {
  const words = ['--env=T=a\nb "c" $(d) `e` \\ \'f\'\r\n\n', '--env=E=', '--env=U=é😀\t'];
  const dir = mkdtempSync(join(tmpdir(), 'gf-prelude-'));
  try {
    writeFileSync(join(dir, 'in'), envArgsInput(words) + 'REST=of the env file\n');
    // the script the host runs, with docker replaced by a printer of its argv and of what stdin still holds
    writeFileSync(join(dir, 'script'), `${READ_ENV_ARGS}printf '%s\\0' "$@"; cat`);
    for (const shell of ['sh', 'bash']) {
      const out = execFileSync('sh', ['-c', `cat in | ${shell} script`], { cwd: dir });
      const parts = out.toString('utf8').split('\0');
      expect(parts.slice(0, -1)).toEqual(words);
      expect(parts.at(-1)).toBe('REST=of the env file\n');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the argv property itself catches a user value in option position', () => {
  const pod = { image: '--privileged', args: '' };
  const spec = { argv: ['run', '--detach', '--volume=/:/host', '--privileged'], envFile: '', envArgs: [], dirs: [] } as unknown as RunSpec;
  expect(userOptionProblems(spec, pod)).toEqual(['no end of options']);
  const spec2 = { ...spec, argv: ['run', '-v', '/:/host', '--', '--privileged'] };
  expect(userOptionProblems(spec2, pod)).toEqual(['option position holds "-v"', 'option position holds "/:/host"']);
});
