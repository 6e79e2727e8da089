// Interactive exec over a WebSocket (issue 13, docs/pods.md "Interactive exec") end to end: a real
// sshd test host, the real Docker engine, the control plane with its provisioner, a `ws` client
// speaking the framing by hand, and `gpufleet pods exec` on a pipe and on a terminal (script(1)).
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../../../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost, type TestHost } from '../../../harness/index.ts';
import { provisioner } from '../../../../provisioner/index.ts';
import { waitFor as waitForHarness } from '../../../harness/wait-for.ts';
import { readSse } from '../../../harness/sse-reader.ts';

const run = promisify(execFile);
const IDLE_MS = 4_000;
let cp: TestControlPlane;
let host: TestHost;
let hostId: string;
let image: string;
let user: { accountId: string; key: string };
let podId: string;

const IDLE = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 100);

interface Session {
  ws: WebSocket;
  stdout: () => string;
  stderr: () => string;
  /** the last JSON message and the close frame */
  done: Promise<{ last: { exit?: { code: number | null; reason: string }; error?: { status: number } } | null; close: number; reason: string }>;
  send(stdin: string | Buffer): void;
  control(m: unknown): void;
}

/** opens a session; a refusal before the upgrade answers its HTTP status */
function open(id: string, argv: string[], opts: { tty?: boolean; cols?: number; rows?: number; key?: string | null; query?: string } = {}): Promise<Session | { status: number; body: string }> {
  const q = new URLSearchParams();
  for (const a of argv) q.append('command', a);
  if (opts.tty) q.set('tty', 'true');
  if (opts.cols) q.set('cols', String(opts.cols));
  if (opts.rows) q.set('rows', String(opts.rows));
  const key = opts.key === undefined ? user.key : opts.key;
  const ws = new WebSocket(`${cp.url.replace(/^http/, 'ws')}/v2/pods/${id}/exec/ws?${opts.query ?? q.toString()}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  let out = Buffer.alloc(0);
  let err = Buffer.alloc(0);
  let last: Awaited<Session['done']>['last'] = null;
  ws.on('message', (data: Buffer, binary) => {
    if (!binary) return void (last = JSON.parse(data.toString()));
    if (data[0] === 1) out = Buffer.concat([out, data.subarray(1)]);
    if (data[0] === 2) err = Buffer.concat([err, data.subarray(1)]);
  });
  const done = new Promise<Awaited<Session['done']>>((r) => ws.on('close', (close, reason) => r({ last, close, reason: reason.toString() })));
  return new Promise((resolve, reject) => {
    ws.on('open', () =>
      resolve({
        ws,
        stdout: () => out.toString(),
        stderr: () => err.toString(),
        done,
        send: (t) => ws.send(Buffer.concat([Buffer.from([0]), typeof t === 'string' ? Buffer.from(t) : t])),
        control: (m) => ws.send(JSON.stringify(m)),
      }),
    );
    // answered once the server has closed the connection too: a refused upgrade must not hold it
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.socket.on('close', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
  });
}

async function session(id: string, argv: string[], opts: Parameters<typeof open>[2] = {}): Promise<Session> {
  const s = await open(id, argv, opts);
  if (!('ws' in s)) throw new Error(`refused: ${s.status} ${s.body}`);
  return s;
}

/** sends `stty size` every 200 ms until the terminal shows `size` ("rows cols"); 10 s at the most */
async function sttySize(s: Session, what: string, size: string): Promise<void> {
  await waitFor(
    what,
    async () => {
      s.send('stty size\n');
      await new Promise((r) => setTimeout(r, 200));
      return s.stdout().includes(size);
    },
    10_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; the terminal showed ${JSON.stringify(s.stdout())}`);
  });
}

/** the host's `docker exec` clients of this pod whose argv holds `marker` */
async function dockerExecs(marker: string): Promise<string[]> {
  const r = await run('pgrep', ['-f', '--', `docker exec -i .*gpufleet-${podId} .*${marker}`]).catch((e: { code?: number }) => {
    if (e.code === 1) return { stdout: '' };
    throw e;
  });
  return r.stdout.split('\n').filter(Boolean);
}

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `execws-${process.pid}`, gpus: [0, 1].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, config: { execIdleTimeoutMs: IDLE_MS } });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-execws' });
  user = await cp.newAccount('read_write');
  const pod = await cp.api('/v2/pods', { key: user.key, method: 'POST', json: { name: 'execws', image, args: IDLE, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } } });
  podId = ((await pod.json()) as { id: string }).id;
  await waitFor('pod RUNNING', async () => ((await (await cp.api(`/v2/pods/${podId}`, { key: user.key })).json()) as { status: string }).status === 'RUNNING');
}, 180_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe('interactive exec over a WebSocket', () => {
  test('stdin reaches `cat` and comes back on stdout; eof ends it with exit 0; start and end are events with the key and the exit code', async () => {
    const s = await session(podId, ['cat']);
    s.send('hello\n');
    await waitFor('echo', async () => s.stdout() === 'hello\n', 10_000);
    s.send('\u0000binary\u00ff');
    s.control({ eof: true });
    const d = await s.done;
    expect(s.stdout()).toBe('hello\n\u0000binary\u00ff');
    expect(d.last).toEqual({ exit: { code: 0, reason: 'exited' } });
    expect(d.close).toBe(1000);
    const keyId = (await cp.services.keys.authenticate(`Bearer ${user.key}`)).keyId;
    const ev = (await (await cp.api(`/v2/events?resourceId=${podId}`, { key: user.key })).json()) as { events: { type: string; reason: string; actor: string }[] };
    const mine = ev.events.filter((e) => e.type.startsWith('pod.exec_')).slice(-2);
    expect(mine).toEqual([
      expect.objectContaining({ type: 'pod.exec_start', reason: 'exec session "cat"', actor: `user:${keyId}` }),
      expect.objectContaining({ type: 'pod.exec_end', reason: 'exec session ended (exited, exit code 0): "cat"', actor: `user:${keyId}` }),
    ]);
  }, 30_000);

  test('4 MiB of random stdin arrives whole and in order, however fast the client sends it', async () => {
    const data = randomBytes(4 << 20);
    const s = await session(podId, ['md5sum']);
    for (let i = 0; i < data.length; i += 64 << 10) s.send(data.subarray(i, i + (64 << 10)));
    s.control({ eof: true });
    const d = await s.done;
    expect(d.last).toEqual({ exit: { code: 0, reason: 'exited' } });
    expect(s.stdout().split(' ')[0]).toBe(createHash('md5').update(data).digest('hex'));
  }, 60_000);

  test("sh -c 'exit 3': the exit code is the last message, stderr comes apart without a terminal", async () => {
    const s = await session(podId, ['sh', '-c', 'echo out; echo err >&2; exit 3']);
    const d = await s.done;
    expect(d.last).toEqual({ exit: { code: 3, reason: 'exited' } });
    expect(d.reason).toBe('exit 3');
    expect(s.stdout()).toBe('out\n');
    expect(s.stderr()).toBe('err\n');
  }, 30_000);

  test('a terminal: its size is the one asked for, a resize changes what `stty size` says, and exit ends it', async () => {
    const s = await session(podId, ['sh'], { tty: true, cols: 91, rows: 27 });
    // typed ahead before docker's client has the terminal in raw mode, a line can be lost (as in any
    // terminal), so ask again until the shell answers
    await sttySize(s, 'first size', '27 91');
    s.control({ resize: { cols: 120, rows: 40 } });
    // the resize is a window-change on the SSH channel, then docker's own resize: give it a moment
    await sttySize(s, 'new size', '40 120');
    s.send('exit 5\n');
    expect((await s.done).last).toEqual({ exit: { code: 5, reason: 'exited' } });
  }, 30_000);

  test('hostile argv runs literally: no docker option, no shell expansion', async () => {
    const words = ['--privileged', '$(id)', '`id`', 'a b', "it's", '; touch /tmp/ws-pwned', '-u', '--user=0'];
    const s = await session(podId, ['printf', '[%s]\\n', ...words]);
    expect((await s.done).last).toEqual({ exit: { code: 0, reason: 'exited' } });
    expect(s.stdout()).toBe(words.map((w) => `[${w}]\n`).join(''));
    const t = await session(podId, ['test', '-e', '/tmp/ws-pwned']);
    expect((await t.done).last?.exit?.code).toBe(1);
    // a first word that looks like a docker option is the program, which does not exist
    const o = await session(podId, ['--privileged', 'id'], { tty: true });
    const d = await o.done;
    expect(d.last?.exit?.code).not.toBe(0);
    expect(o.stdout()).not.toMatch(/uid=/);
  }, 30_000);

  test('a client that disconnects closes the SSH channel and ends docker exec on the host (with and without a terminal)', async () => {
    for (const tty of [false, true]) {
      const marker = `ws-gone-${tty}-${process.pid}`;
      const s = await session(podId, ['sh', '-c', 'echo started; sleep 600', marker], { tty });
      await waitFor('started', async () => s.stdout().includes('started'), 10_000);
      expect(cp.services.sshPool.openStreams(hostId)).toBe(1);
      expect((await dockerExecs(marker)).length).toBeGreaterThan(0);
      s.ws.terminate(); // no close handshake: the client vanished
      await waitFor('the stream channel closed', async () => cp.services.sshPool.openStreams(hostId) === 0, 10_000);
      await waitFor('docker exec gone from the host', async () => (await dockerExecs(marker)).length === 0, 10_000);
    }
    const ev = (await (await cp.api(`/v2/events?resourceId=${podId}`, { key: user.key })).json()) as { events: { type: string; reason: string }[] };
    expect(ev.events.at(-1)).toMatchObject({ type: 'pod.exec_end', reason: expect.stringMatching(/^exec session ended \(client closed\)/) });
  }, 40_000);

  test('an idle session ends after the idle timeout and says so', async () => {
    const s = await session(podId, ['sleep', '600']);
    const started = Date.now();
    const d = await s.done;
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 100);
    expect(d.last).toEqual({ exit: { code: null, reason: 'idle timeout' } });
    await waitFor('the stream channel closed', async () => cp.services.sshPool.openStreams(hostId) === 0, 10_000);
  }, 30_000);

  test("another account's pod is 404, a read key 403, no key 401, bad parameters 422, a plain GET 400: all before the upgrade, nothing run", async () => {
    const other = await cp.newAccount('read_write');
    expect(await open(podId, ['touch', '/tmp/ws-by-other'], { key: other.key })).toMatchObject({ status: 404 });
    expect(await open('no-such-pod', ['true'])).toMatchObject({ status: 404 });
    const reader = (await cp.services.keys.createKey({ accountId: user.accountId, name: 'reader', scope: 'read' })).key;
    expect(await open(podId, ['touch', '/tmp/ws-by-reader'], { key: reader })).toMatchObject({ status: 403 });
    expect(await open(podId, ['touch', '/tmp/ws-by-nobody'], { key: null })).toMatchObject({ status: 401 });
    for (const query of ['', 'command=', 'command=a%00b', 'command=echo&cols=0', 'command=echo&rows=abc', 'command=echo&tty=maybe', 'command=echo&cols=1001']) {
      const r = await open(podId, [], { query });
      expect({ query, status: 'status' in r ? r.status : 101 }).toEqual({ query, status: 422 });
    }
    const plain = await fetch(`${cp.url}/v2/pods/${podId}/exec/ws?command=true`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(plain.status).toBe(400);
    const s = await session(podId, ['sh', '-c', 'ls /tmp/ws-by-other /tmp/ws-by-reader /tmp/ws-by-nobody 2>/dev/null | wc -l']);
    await s.done;
    expect(s.stdout().trim()).toBe('0');
  }, 30_000);

  test('a browser-style client: a single-use ticket instead of a key, good once, for its pod, for 30 s', async () => {
    const ticketFor = (id: string, key: string) => cp.api(`/v2/pods/${id}/exec/ticket`, { method: 'POST', key });
    const res = await ticketFor(podId, user.key);
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { ticket, expiresAt } = (await res.json()) as { ticket: string; expiresAt: string };
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(30_000);
    const q = (t: string) => `command=echo&command=via-ticket&ticket=${encodeURIComponent(t)}`;
    const s = await session(podId, [], { key: null, query: q(ticket) });
    expect((await s.done).last).toEqual({ exit: { code: 0, reason: 'exited' } });
    expect(s.stdout()).toBe('via-ticket\n');
    // used: gone
    expect(await open(podId, [], { key: null, query: q(ticket) })).toMatchObject({ status: 401 });
    // another pod's path: refused (and the ticket spent)
    const second = ((await (await ticketFor(podId, user.key)).json()) as { ticket: string }).ticket;
    expect(await open('no-such-pod', [], { key: null, query: q(second) })).toMatchObject({ status: 401 });
    expect(await open(podId, [], { key: null, query: q(second) })).toMatchObject({ status: 401 });
    // not a ticket at all, another account's pod, a read key
    expect(await open(podId, [], { key: null, query: q('gfx_' + 'A'.repeat(43)) })).toMatchObject({ status: 401 });
    const other = await cp.newAccount('read_write');
    expect((await ticketFor(podId, other.key)).status).toBe(404);
    const reader = (await cp.services.keys.createKey({ accountId: user.accountId, name: 'reader2', scope: 'read' })).key;
    expect((await ticketFor(podId, reader)).status).toBe(403);
    // an expired ticket (the clock moved on 30 s)
    const principal = await cp.services.keys.authenticate(`Bearer ${user.key}`);
    const old = cp.services.podExec.tickets.issue(principal, podId, Date.now() - 30_001);
    expect(await open(podId, [], { key: null, query: q(old.ticket) })).toMatchObject({ status: 401 });
  }, 30_000);

  test('a ticket dies with its key: revoked between issue and use, the ticket is 401 and nothing runs', async () => {
    const { key, record } = await cp.services.keys.createKey({ accountId: user.accountId, name: 'short-lived', scope: 'read_write' });
    const admin = (await cp.services.keys.createKey({ accountId: user.accountId, name: 'admin', scope: 'admin' })).key;
    const ticketOf = async (k: string) => ((await (await cp.api(`/v2/pods/${podId}/exec/ticket`, { method: 'POST', key: k })).json()) as { ticket: string }).ticket;
    const q = (t: string) => `command=touch&command=/tmp/revoked-ran&ticket=${encodeURIComponent(t)}`;
    const doomed = await ticketOf(key);
    const kept = await ticketOf(key);
    expect((await cp.api(`/v2/keys/${record.id}`, { method: 'DELETE', key: admin })).status).toBe(200);
    // the key itself is refused from now on, and so is every ticket it asked for, within its 30 s
    expect((await cp.api(`/v2/pods/${podId}`, { key })).status).toBe(401);
    expect(await open(podId, [], { key: null, query: q(doomed) })).toMatchObject({ status: 401 });
    expect(await open(podId, [], { key: null, query: q(kept) })).toMatchObject({ status: 401 });
    const check = await session(podId, ['sh', '-c', 'test -e /tmp/revoked-ran && echo ran || echo absent']);
    await check.done;
    expect(check.stdout()).toBe('absent\n');
    // the same steps with a live key: the ticket works (so the 401s above were the revocation's)
    const live = await session(podId, [], { key: null, query: `command=echo&command=alive&ticket=${encodeURIComponent(await ticketOf(user.key))}` });
    expect((await live.done).last).toEqual({ exit: { code: 0, reason: 'exited' } });
  }, 30_000);

  test('exec events keep the program and a SHA-256 of the arguments, never the arguments (a password typed in a command)', async () => {
    const secret = `hunter2-${randomBytes(6).toString('hex')}`;
    const argv = ['sh', '-c', `echo -n ${secret} > /dev/null`];
    const s = await session(podId, argv);
    expect((await s.done).last).toEqual({ exit: { code: 0, reason: 'exited' } });
    const digest = createHash('sha256').update(JSON.stringify(argv.slice(1))).digest('hex');
    const ev = (await (await cp.api(`/v2/events?resourceId=${podId}`, { key: user.key })).json()) as { events: { type: string; reason: string }[] };
    const mine = ev.events.filter((e) => e.type.startsWith('pod.exec_')).slice(-2);
    expect(mine.map((e) => e.reason)).toEqual([
      `exec session "sh" (2 arguments, sha256:${digest})`,
      `exec session ended (exited, exit code 0): "sh" (2 arguments, sha256:${digest})`,
    ]);
    // nowhere in the pod's history: its events, nor its system log lines
    expect(JSON.stringify(ev)).not.toContain(secret);
    const logs = await readSse(`${cp.url}/v2/pods/${podId}/logs?source=system&tail=5000`, { headers: { authorization: `Bearer ${user.key}` } });
    const lines: string[] = [];
    try {
      for (;;) lines.push((await logs.next(1_000)).data);
    } catch (e) {
      expect(String(e)).toMatch(/no event/);
    } finally {
      logs.close();
    }
    expect(lines.some((l) => l.includes(`sha256:${digest}`))).toBe(true);
    expect(lines.join('\n')).not.toContain(secret);
  }, 30_000);

  test('gpufleet pods exec: stdin piped when it is not a terminal, the exit code passed on', async () => {
    const cli = (args: string[], input: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], {
          env: { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: user.key, NO_COLOR: '1' },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(input);
      });
    expect(await cli(['pods', 'exec', podId, '--', 'sh', '-c', 'tr a-z A-Z; exit 4'], 'piped in\n')).toMatchObject({ code: 4, stdout: 'PIPED IN\n' });
    expect(await cli(['pods', 'exec', podId, '--', 'sh', '-c', 'cat >&2'], 'to stderr\n')).toMatchObject({ code: 0, stdout: '', stderr: 'to stderr\n' });
  }, 90_000);

  test('gpufleet pods exec -- sh on a terminal: a terminal in the pod, typed input runs, exit code passed on', async () => {
    // script(1) gives the CLI a terminal of its own; what is typed goes through it in raw mode
    const bin = path.join(REPO_ROOT, 'bin/gpufleet.js');
    const cmd = `stty cols 77 rows 21; ${process.execPath} ${bin} pods exec ${podId} -- sh`;
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: user.key, TERM: 'xterm' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const closed = new Promise<number | null>((r) => child.on('close', r));
    // the container's shell prompt: the session is open and the terminal in raw mode
    await waitFor('the prompt', async () => out.includes('#'), 30_000);
    child.stdin.write('tty; stty size\r');
    await waitFor('tty and size', async () => /\/dev\/pts\/\d+/.test(out) && out.includes('21 77'), 15_000);
    child.stdin.write('exit 6\r');
    expect(await closed).toBe(6);
  }, 90_000);
});
