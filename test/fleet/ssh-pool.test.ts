// The pool against a real sshd test host (test/harness): TOFU, pin mismatch, multiplexing,
// stdin, errors, timeouts and reconnecting after the host's sshd restarts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGpufleetError, type GpufleetError } from '../../model/base/errors.ts';
import { startTestHost, FIXTURE_GPUS, type TestHost } from '../harness/index.ts';
import { SshPool, shellJoin, type SshTarget } from '../../fleet/ssh-pool.ts';

let host: TestHost;
let pool: SshPool;

const target = (pinned: string | null): SshTarget => ({
  hostId: 'h-1',
  address: host.address,
  port: host.port,
  user: host.user,
  privateKey: host.privateKey,
  pinnedFingerprint: pinned,
});

async function rejection(p: Promise<unknown>): Promise<GpufleetError> {
  try {
    await p;
  } catch (e) {
    if (isGpufleetError(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  host = await startTestHost({ name: 'pool-host', gpus: [FIXTURE_GPUS.L40S] });
  pool = new SshPool({ connectTimeoutMs: 5_000, keepaliveIntervalMs: 2_000 });
});

afterAll(async () => {
  await pool?.closeAll();
  await host?.dispose();
});

describe('SshPool', () => {
  it('trusts on first use and reports the fingerprint ssh-keygen prints', async () => {
    const report = await pool.connect(target(null));
    expect(report).toEqual({ fingerprint: host.hostKeyFingerprint, firstUse: true });
    expect(pool.presentedFingerprint('h-1')).toBe(host.hostKeyFingerprint);
    const r = await pool.exec(target(report.fingerprint), 'nvidia-smi --query-gpu=name --format=csv,noheader');
    expect(r).toEqual({ stdout: 'NVIDIA L40S\n', stderr: '', code: 0 });
  });

  it('runs 50 concurrent commands over one connection', async () => {
    const t = target(host.hostKeyFingerprint);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => pool.exec(t, `echo $SSH_CONNECTION ${i}; sleep 0.05`)),
    );
    // every command saw the same client-side source port: one TCP connection carried them all
    const sources = new Set(results.map((r) => r.stdout.split(' ').slice(0, 2).join(' ')));
    expect(sources.size).toBe(1);
    results.forEach((r, i) => expect(r.stdout.trim().endsWith(` ${i}`)).toBe(true));
  });

  it('passes stdin and quotes argv safely', async () => {
    const t = target(host.hostKeyFingerprint);
    const secret = "s3cr'et $HOME `id` \"x\"\nline2\n";
    expect((await pool.exec(t, 'cat', { stdin: secret })).stdout).toBe(secret);
    const argv = ['printf', '%s|', 'a b', "it's", '$HOME', '*', '', 'x=y'];
    expect((await pool.exec(t, argv)).stdout).toBe("a b|it's|$HOME|*||x=y|");
    expect(shellJoin(['A=1', 'ls'])).toBe("'A=1' ls");
    // without stdin the command still sees EOF instead of hanging
    expect((await pool.exec(t, 'cat', { timeoutMs: 3_000 })).stdout).toBe('');
  });

  it('throws SSH_COMMAND_FAILED on non-zero exit unless allowFailure', async () => {
    const t = target(host.hostKeyFingerprint);
    const err = await rejection(pool.exec(t, 'echo oops >&2; exit 3'));
    expect(err.code).toBe('SSH_COMMAND_FAILED');
    expect(err.fields).toMatchObject({ command: 'echo oops >&2; exit 3', code: 3, stderr: 'oops\n' });
    expect(await pool.exec(t, 'exit 3', { allowFailure: true })).toEqual({ stdout: '', stderr: '', code: 3 });
  });

  it('enforces the per-command timeout', async () => {
    const t = target(host.hostKeyFingerprint);
    const started = Date.now();
    const err = await rejection(pool.exec(t, 'sleep 20', { timeoutMs: 500 }));
    expect(err.code).toBe('SSH_COMMAND_FAILED');
    expect(err.message).toMatch(/timed out after 500 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await pool.exec(t, 'echo still-fine')).stdout).toBe('still-fine\n');
  });

  it('reconnects after the host sshd is stopped and started again', async () => {
    const t = target(host.hostKeyFingerprint);
    const before = (await pool.exec(t, 'echo $SSH_CONNECTION')).stdout;
    await host.stop();
    const down = await rejection(pool.exec(t, 'true'));
    expect(down.code).toBe('HOST_UNREACHABLE');
    expect(down.cause).toBeInstanceOf(Error);
    await host.start();
    const after = (await pool.exec(t, 'echo $SSH_CONNECTION')).stdout;
    expect(after).not.toBe(before); // a new TCP connection (new source port)
  });

  it('reconnects transparently when the pooled connection went stale while idle', async () => {
    const t = target(host.hostKeyFingerprint);
    await pool.exec(t, 'true');
    await host.stop();
    await host.start();
    expect((await pool.exec(t, 'echo ok')).stdout).toBe('ok\n');
  });

  it('detects a hung host by keepalive and recovers once it answers again', async () => {
    const fast = new SshPool({ connectTimeoutMs: 1_000, keepaliveIntervalMs: 300, keepaliveCountMax: 2 });
    const t = target(host.hostKeyFingerprint);
    try {
      await fast.exec(t, 'true');
      await host.pause();
      const started = Date.now();
      const err = await rejection(fast.exec(t, 'true', { timeoutMs: 20_000 }));
      expect(err.code).toBe('HOST_UNREACHABLE');
      expect(Date.now() - started).toBeLessThan(6_000); // keepalive + connect timeout, not the 20 s command limit
      await host.resume();
      expect((await fast.exec(t, 'echo back')).stdout).toBe('back\n');
    } finally {
      await host.resume();
      await fast.closeAll();
    }
  });

  it('measures 20 sequential round trips (TCP_NODELAY)', async () => {
    const t = target(host.hostKeyFingerprint);
    await pool.exec(t, 'true');
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = performance.now();
      await pool.exec(t, 'true');
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    const sum = times.reduce((a, b) => a + b, 0);
    console.log(
      `ssh-pool: 20 sequential 'true' execs: total ${sum.toFixed(1)} ms, median ${times[10]?.toFixed(2)} ms, max ${times[19]?.toFixed(2)} ms`,
    );
    expect(times[10]).toBeLessThan(1_000);
  });

  it('refuses a host whose key changed from the pinned one', async () => {
    const pinned = host.hostKeyFingerprint;
    await host.rotateHostKey();
    const err = await rejection(pool.exec(target(pinned), 'true'));
    expect(err.code).toBe('HOST_KEY_MISMATCH');
    expect(err.fields).toMatchObject({ expected: pinned, presented: host.hostKeyFingerprint });
    expect(err.message).toContain(pinned);
    expect(err.message).toContain(host.hostKeyFingerprint);
    // re-pinning the new key (an admin accepted it) works again
    expect((await pool.exec(target(host.hostKeyFingerprint), 'echo ok')).stdout).toBe('ok\n');
  });

  it('reports an unreachable address as HOST_UNREACHABLE', async () => {
    const err = await rejection(pool.exec({ ...target(null), hostId: 'nowhere', port: 1 }, 'true'));
    expect(err.code).toBe('HOST_UNREACHABLE');
    expect(err.fields).toMatchObject({ hostId: 'nowhere', port: 1 });
  });
});
