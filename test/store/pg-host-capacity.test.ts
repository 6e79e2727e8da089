// The pure half of the PostgreSQL store's host capacity re-check (store/pg/host-capacity.ts): which
// hosts a transaction's pod writes add to, and the scheduler's rule applied to a host's whole load
// (fleet/host-load.ts). The check against a real database: test/api/postgres-replicas-capacity.test.ts.
import { describe, expect, it } from 'vitest';
import { hostLoadRule, overcommitOf } from '../../fleet/host-load.ts';
import type { PodRecord } from '../../model/index.ts';
import type { AnyRecord } from '../../store/base/memory-table.ts';
import { hostsGainingLoad } from '../../store/pg/host-capacity.ts';
import { fakeHostRecord } from '../harness/fake-hosts.ts';

/** the fields the scheduler counts; the rest of a pod record does not matter here */
const pod = (id: string, over: Partial<PodRecord> = {}): PodRecord =>
  ({ id, allocated: true, hostId: 'h1', gpuUuids: [], reservedVcpu: 0, reservedMemoryGb: 0, disk: 10, mounts: {}, ...over }) as PodRecord;

describe('overcommitOf: the placer’s room rule for a host’s whole load', () => {
  const host = fakeHostRecord({ id: 'h1', gpus: 2, cpuCount: 8, memoryGb: 32, diskFreeGb: 100 });
  it('fits up to the host’s capacity exactly', () => {
    expect(overcommitOf(host, [pod('a', { reservedVcpu: 4, reservedMemoryGb: 16, disk: 50 }), pod('b', { reservedVcpu: 4, reservedMemoryGb: 16, disk: 50 })])).toBeNull();
  });
  it('names vCPU or memory, then disk, once exceeded', () => {
    expect(overcommitOf(host, [pod('a', { reservedVcpu: 6 }), pod('b', { reservedVcpu: 3 })])).toBe('cpu-memory');
    expect(overcommitOf(host, [pod('a', { cpu: { id: 'cpu3c', vcpuCount: 2, memory: 20 } }), pod('b', { reservedMemoryGb: 13 })])).toBe('cpu-memory');
    expect(overcommitOf(host, [pod('a', { disk: 60 }), pod('b', { disk: 20, mounts: { persistent: { size: 30, path: '/workspace' } } })])).toBe('disk');
  });
  it('counts only pods placed on that host', () => {
    expect(overcommitOf(host, [pod('a', { reservedVcpu: 8 }), pod('b', { reservedVcpu: 8, allocated: false }), pod('c', { reservedVcpu: 8, hostId: 'h2' })])).toBeNull();
  });
});

describe('hostsGainingLoad: the hosts a transaction’s pod writes add to', () => {
  const writes = (...pods: [string, PodRecord | null][]) => new Map(pods.map(([id, p]) => [id, p as unknown as AnyRecord | null]));
  const seen = (pods: Record<string, PodRecord | null>) => (id: string) => pods[id] as unknown as AnyRecord | null | undefined;

  it('a pod placed new, started again, moved, or written unread', () => {
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a')]), seen({ a: null }))).toEqual(['h1']);
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a')]), seen({ a: pod('a', { allocated: false }) }))).toEqual(['h1']);
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a', { hostId: 'h2' })]), seen({ a: pod('a') }))).toEqual(['h2']);
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a')]), seen({}))).toEqual(['h1']);
  });
  it('a pod given more on its host', () => {
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a', { disk: 11 })]), seen({ a: pod('a') }))).toEqual(['h1']);
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a', { reservedVcpu: 1 })]), seen({ a: pod('a') }))).toEqual(['h1']);
  });
  it('nothing for writes that leave a placement as it was, shrink it or release it (no query for them)', () => {
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a', { name: 'renamed' })]), seen({ a: pod('a') }))).toEqual([]);
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a', { disk: 5 })]), seen({ a: pod('a') }))).toEqual([]);
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a', { allocated: false })]), seen({ a: pod('a') }))).toEqual([]);
    expect(hostsGainingLoad(hostLoadRule, writes(['a', null]), seen({ a: pod('a') }))).toEqual([]);
  });
  it('each host once, in id order (the order its locks are taken in)', () => {
    expect(hostsGainingLoad(hostLoadRule, writes(['a', pod('a', { hostId: 'h9' })], ['b', pod('b', { hostId: 'h1' })], ['c', pod('c', { hostId: 'h9' })]), seen({}))).toEqual(['h1', 'h9']);
  });
});
