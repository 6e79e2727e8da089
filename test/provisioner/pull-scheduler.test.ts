// The pull scheduler's rules (the end-to-end test, test/provisioner/pull-sharing.test.ts, runs real pulls):
// slots per host, an account's share, round robin, coalescing, stall detection, cancelling. Pulls here
// are controlled by the test: each ends when the test says.
import { describe, expect, test } from 'vitest';
import { PullScheduler, type PullEnd } from '../../provisioner/pull-scheduler.ts';
import type { PullOutcome, RunningPull } from '../../provisioner/image-pull.ts';
import { PullProgress, pullingReason } from '../../provisioner/pull-progress.ts';

interface Controlled {
  key: string;
  account: string;
  finish(o: Partial<PullOutcome>): void;
  cancelled: boolean;
  moved: () => void;
}

function world(settings = { perHost: 3, perAccount: 2, stallMs: 60_000 }) {
  const scheduler = new PullScheduler(settings);
  const started: Controlled[] = [];
  const ends = new Map<string, PullEnd>();
  const submit = (account: string, key: string, listener = `${account}:${key}`) =>
    scheduler.submit(
      {
        hostId: 'h',
        key,
        accountId: account,
        start: async (moved) => {
          let finish!: (o: PullOutcome) => void;
          const done = new Promise<PullOutcome>((r) => (finish = r));
          const c: Controlled = { key, account, cancelled: false, moved, finish: (o) => finish({ imageId: null, cut: false, output: '', ...o }) };
          started.push(c);
          const pull: RunningPull = { done, summary: () => ({ layers: 0, layersDone: 0, bytes: 0, bytesKnown: 0 }), cancel: () => ((c.cancelled = true), c.finish({ cut: true })) };
          return pull;
        },
      },
      listener,
      (end) => ends.set(listener, end),
    );
  const tick = () => new Promise((r) => setTimeout(r, 0));
  return { scheduler, started, ends, submit, tick };
}

describe('pull scheduler', () => {
  test('one account never takes every slot: another account waiting gets the one left', async () => {
    const w = world();
    for (const k of ['a1', 'a2', 'a3', 'a4']) w.submit('A', k);
    await w.tick();
    expect(w.started.map((s) => s.key)).toEqual(['a1', 'a2']);
    w.submit('B', 'b1');
    await w.tick();
    expect(w.started.map((s) => s.key)).toEqual(['a1', 'a2', 'b1']);
    expect(w.scheduler.state('h', 'a3')).toBe('queued');
  });

  test('a freed slot goes to the account served least recently (round robin)', async () => {
    const w = world({ perHost: 2, perAccount: 2, stallMs: 60_000 });
    w.submit('A', 'a1');
    w.submit('A', 'a2');
    w.submit('B', 'b1');
    w.submit('C', 'c1');
    await w.tick();
    // perHost 2: an account holds at most 1
    expect(w.started.map((s) => s.key)).toEqual(['a1', 'b1']);
    w.started[0]!.finish({ imageId: 'sha256:x' });
    await w.tick();
    // C has never been served; A was served before B
    expect(w.started.map((s) => s.key)).toEqual(['a1', 'b1', 'c1']);
    w.started[1]!.finish({ imageId: 'sha256:y' });
    await w.tick();
    expect(w.started.map((s) => s.key)).toEqual(['a1', 'b1', 'c1', 'a2']);
  });

  test('pulls of the same key coalesce; each listener hears the end', async () => {
    const w = world();
    w.submit('A', 'img', 'pod-1');
    w.submit('B', 'img', 'pod-2');
    await w.tick();
    expect(w.started).toHaveLength(1);
    w.started[0]!.finish({ imageId: 'sha256:z' });
    await w.tick();
    expect(w.ends.get('pod-1')).toEqual({ kind: 'pulled', imageId: 'sha256:z' });
    expect(w.ends.get('pod-2')).toEqual({ kind: 'pulled', imageId: 'sha256:z' });
  });

  test('a pull nobody waits for is cancelled; one a listener still waits for is not', async () => {
    const w = world();
    w.submit('A', 'img', 'pod-1');
    w.submit('A', 'img', 'pod-2');
    await w.tick();
    w.scheduler.drop('h', 'img', 'pod-1');
    expect(w.started[0]!.cancelled).toBe(false);
    w.scheduler.drop('h', 'img', 'pod-2');
    expect(w.started[0]!.cancelled).toBe(true);
  });

  test('no progress for stallMs: cancelled as stalled; progress keeps it going', async () => {
    const w = world({ perHost: 3, perAccount: 2, stallMs: 200 });
    w.submit('A', 'slow');
    await w.tick();
    const keep = setInterval(() => w.started[0]!.moved(), 50);
    await new Promise((r) => setTimeout(r, 500));
    expect(w.started[0]!.cancelled).toBe(false);
    clearInterval(keep);
    await new Promise((r) => setTimeout(r, 450));
    expect(w.started[0]!.cancelled).toBe(true);
    await w.tick();
    expect(w.ends.get('A:slow')?.kind).toBe('stalled');
  });
});

describe('pull progress', () => {
  test("docker's terminal output becomes numbers; its other lines stay out of the reason", () => {
    const p = new PullProgress();
    const esc = '\x1b[1A\x1b[2K\r';
    expect(p.feed('1: Pulling from x/y\r\n')).toBe(false);
    expect(p.feed(`${esc}aaaaaaaaaaaa: Pulling fs layer \r\n${esc}bbbbbbbbbbbb: Already exists \r\n`)).toBe(true);
    expect(p.feed(`${esc}aaaaaaaaaaaa: Downloading [=====>    ]  12.3MB/4`)).toBe(false); // a line cut between chunks
    expect(p.feed('0MB\r\x1b[1B')).toBe(true);
    expect(pullingReason('x/y:1', p.summary())).toBe('pulling image x/y:1 (12.3 MB of 40 MB, 1 of 2 layers done)');
    p.feed('Error response from daemon: denied: SECRET\r\n');
    expect(pullingReason('x/y:1', p.summary())).not.toContain('SECRET');
    expect(p.lastLines()).toBe('1: Pulling from x/y\nError response from daemon: denied: SECRET');
  });
});
