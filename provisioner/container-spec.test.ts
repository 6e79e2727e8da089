import { expect, test } from 'vitest';
import { runSpec, splitArgs } from './container-spec.ts';
import type { PodRecord } from '../model/pod.ts';

test('args split like a shell splits words, without expansion', () => {
  expect(splitArgs(`python -m http.server 8000`)).toEqual(['python', '-m', 'http.server', '8000']);
  expect(splitArgs(`sh -c 'echo "hi there"; exit 3'`)).toEqual(['sh', '-c', 'echo "hi there"; exit 3']);
  expect(splitArgs(`a "b c" d\\ e '' $HOME`)).toEqual(['a', 'b c', 'd e', '', '$HOME']);
  expect(splitArgs('   ')).toEqual([]);
});

const base = {
  id: 'p1', image: 'img:1', args: 'sleep 10', env: { A: 'x\ny' }, ports: ['8888/http', '53/udp'], mounts: {},
  gpuUuids: ['GPU-a', 'GPU-b'], specGeneration: 3,
} as unknown as PodRecord;

test('GPU pods use the nvidia runtime with NVIDIA_VISIBLE_DEVICES, env only on stdin', () => {
  const s = runSpec({ ...base, gpu: { id: 'x', count: 2 } } as PodRecord, 'h1', (v) => `/vol/${v}`);
  expect(s.argv).toEqual(expect.arrayContaining(['--runtime', 'nvidia', '--env-file', '/dev/stdin', '-p', '8888/tcp', '-p', '53/udp']));
  expect(s.argv.slice(-3)).toEqual(['img:1', 'sleep', '10']);
  expect(s.envFile).toContain('NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b\n');
  expect(s.envFile).toContain('A=x y\n');
  expect(s.argv.join(' ')).not.toContain('A=x');
  expect(s.argv).toEqual(expect.arrayContaining(['--label', 'gpufleet.host=h1', '--label', 'gpufleet.spec=3']));
});

test('CPU pods get CPU and memory limits; mounts bind host directories', () => {
  const s = runSpec(
    { ...base, gpuUuids: [], cpu: { id: 'cpu3c', vcpuCount: 4, memory: 8 }, mounts: { network: [{ volumeId: 'vol1', path: '/data' }] } } as PodRecord,
    'h1',
    (v) => `/vol/${v}`,
  );
  expect(s.argv).toEqual(expect.arrayContaining(['--cpus', '4', '--memory', '8g', '-v', '/vol/vol1:/data']));
  expect(s.argv).not.toContain('nvidia');
  expect(s.dirs).toEqual(['/vol/vol1']);
});
