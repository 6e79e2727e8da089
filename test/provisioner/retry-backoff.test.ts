// The backoff's rules on their own (the real-host test is test/provisioner/reconcile-backoff.test.ts):
// doubling from the first wait up to the cap, jitter only ever shortening, a new intent or a success
// starting over, and the wake when a wait ends.
import { afterEach, expect, test, vi } from 'vitest';
import { backoffDelay, RetryBackoff } from '../../provisioner/retry-backoff.ts';
import { retryReason } from '../../provisioner/pod-retry.ts';
import { GpufleetError } from '../../model/index.ts';

afterEach(() => {
  vi.useRealTimers();
});

test('waits double from 1 s and stop at the 60 s cap', () => {
  const s = { baseMs: 1000, capMs: 60_000 };
  expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => backoffDelay(n, s))).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
});

test('jitter shortens a wait by at most its fraction, never lengthens it', () => {
  const low = new RetryBackoff(() => undefined, { baseMs: 1000, capMs: 60_000, jitter: 0.2 }, () => 0.999_999);
  const high = new RetryBackoff(() => undefined, { baseMs: 1000, capMs: 60_000, jitter: 0.2 }, () => 0);
  for (let i = 0; i < 8; i++) {
    low.failed('p', 'a');
    high.failed('p', 'a');
  }
  expect(low.failed('p', 'a').delayMs).toBe(48_000);
  expect(high.failed('p', 'a').delayMs).toBe(60_000);
  low.clear();
  high.clear();
});

test('a new intent or a success starts over; the wait left counts down', () => {
  const b = new RetryBackoff(() => undefined, { baseMs: 1000, capMs: 60_000, jitter: 0 });
  expect(b.waiting('p', 'a')).toBe(0);
  b.failed('p', 'a');
  b.failed('p', 'a');
  expect(b.failed('p', 'a')).toEqual({ delayMs: 4000, failures: 3 });
  expect(b.waiting('p', 'a')).toBeGreaterThan(3900);
  // the user changed what they want: acted on at once, and the next failure waits 1 s again
  expect(b.waiting('p', 'b')).toBe(0);
  expect(b.failed('p', 'b')).toEqual({ delayMs: 1000, failures: 1 });
  b.forget('p');
  expect(b.failed('p', 'b')).toEqual({ delayMs: 1000, failures: 1 });
  b.retain((key) => key !== 'p');
  expect(b.waiting('p', 'b')).toBe(0);
});

test('the end of a wait wakes the object, once; a forgotten one is not woken', () => {
  vi.useFakeTimers();
  const woken: string[] = [];
  const b = new RetryBackoff((key) => woken.push(key), { baseMs: 1000, capMs: 60_000, jitter: 0 });
  b.failed('p', 'a');
  b.failed('q', 'a');
  b.forget('q');
  vi.advanceTimersByTime(999);
  expect(woken).toEqual([]);
  vi.advanceTimersByTime(100);
  expect(woken).toEqual(['p']);
  vi.advanceTimersByTime(10_000);
  expect(woken).toEqual(['p']);
});

test("a pod's reason says the step in our words and when, never the command's output", () => {
  const stop = new GpufleetError('SSH_COMMAND_FAILED', 'docker stop on 10.0.0.1 failed: Error response from daemon: secret', { fields: { step: 'stop', code: 1 } });
  expect(retryReason(stop, 1, 900)).toBe('the host did not stop the container; trying again in 1 s');
  expect(retryReason(stop, 3, 3500)).toBe('the host did not stop the container (3 times in a row); trying again in 4 s');
  const timedOut = new GpufleetError('SSH_COMMAND_FAILED', 'host h: `docker run …` timed out after 120000 ms', { fields: { code: null, reason: 'timed out' } });
  expect(retryReason(timedOut, 2, 2000)).toBe('a command on the host did not finish (2 times in a row); trying again in 2 s');
});
