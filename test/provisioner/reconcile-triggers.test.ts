import { expect, test } from 'vitest';
import type { PodRecord } from '../../model/records/pod.ts';
import type { StoreChange } from '../../store/index.ts';
import { ReconcileTriggers } from '../../provisioner/reconcile-triggers.ts';

const put = (record: Partial<PodRecord>): StoreChange => ({ collection: 'pods', id: record.id!, deleted: false, record: record as PodRecord });
const user = { actor: 'user:k1' };
const provisioner = { actor: 'provisioner' };

test('a pod written by anyone but the provisioner wakes its host when what a pass acts on changed', () => {
  const t = new ReconcileTriggers();
  const pod = { id: 'p1', hostId: 'h1', desiredStatus: 'RUNNING', status: 'PROVISIONING', specGeneration: 1 } as Partial<PodRecord>;
  expect([...t.wake([put(pod)], user).hosts]).toEqual(['h1']);
  // written again unchanged, or with only the worker's own fields changed (its first ping)
  expect([...t.wake([put(pod)], { actor: undefined }).hosts]).toEqual([]);
  expect([...t.wake([put({ ...pod, worker: { readyAt: 'now' } as PodRecord['worker'] })], { actor: undefined }).hosts]).toEqual([]);
  expect([...t.wake([put({ ...pod, desiredStatus: 'EXITED' })], user).hosts]).toEqual(['h1']);
  // not placed on a host: nothing to wake
  expect([...t.wake([put({ id: 'p2', hostId: null })], user).hosts]).toEqual([]);
  // other collections never
  expect([...t.wake([{ collection: 'hosts', id: 'h1', deleted: false } as StoreChange], user).hosts]).toEqual([]);
});

test("the provisioner's own writes wake nothing, and a worker's readiness after them wakes nothing either", () => {
  const t = new ReconcileTriggers();
  const pod = { id: 'p1', hostId: 'h1', desiredStatus: 'RUNNING', status: 'PROVISIONING', worker: { readyAt: null } } as unknown as PodRecord;
  t.wake([put(pod)], user);
  const running = { ...pod, status: 'RUNNING' } as PodRecord;
  expect([...t.wake([put(running)], provisioner).hosts]).toEqual([]);
  expect([...t.wake([put({ ...running, worker: { ...running.worker!, readyAt: 'now' } })], { actor: undefined }).hosts]).toEqual([]);
  expect([...t.wake([put({ ...running, desiredStatus: 'TERMINATED' })], { actor: undefined }).hosts]).toEqual(['h1']);
});

test('a change without the record is read; a deleted pod is forgotten', () => {
  const t = new ReconcileTriggers();
  expect(t.wake([{ collection: 'pods', id: 'p1', deleted: false } as StoreChange], user).podsToRead).toEqual(['p1']);
  expect(t.wake([{ collection: 'pods', id: 'p1', deleted: false } as StoreChange], provisioner).podsToRead).toEqual([]);
  const pod = { id: 'p3', hostId: 'h1' } as Partial<PodRecord>;
  t.wake([put(pod)], user);
  t.wake([{ collection: 'pods', id: 'p3', deleted: true }], user);
  // the same record again is news after a delete
  expect([...t.wake([put(pod)], user).hosts]).toEqual(['h1']);
});
