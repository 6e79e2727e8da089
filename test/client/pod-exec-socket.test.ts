// client/'s exec session (PodExecSocket, docs/pods.md "Interactive exec") in Node against a real
// control plane, its provisioner and an sshd test host with a real container: the session opens by a
// single-use ticket on a WebSocket that carries no credential of its own (as a browser's), gives a
// terminal (`tty` names /dev/pts/N) whose size follows resize(), ends with the command's exit code,
// keeps stdout and stderr apart without a terminal and passes endInput() on as EOF; refusals are
// the server's ApiErrors (another account's pod 404, a read key 403). The frame codec on its own too.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClient, ApiError, decodeFrame, PodsApi, resizeMessage, stdinFrame, type PodExecSocket, type WebSocketLike } from '../../client/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { waitFor } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';

let cp: TestControlPlane;
let host: TestHost;
let hostId: string;
let user: { accountId: string; key: string };
let podId: string;
/** the URL and headers of every socket the client opened */
const opened: { url: string; headers: Record<string, string> }[] = [];

/** a client whose sockets are `ws` ones made as a browser makes them: the URL only */
function clientOf(key: string): PodsApi {
  return new PodsApi(
    new ApiClient({
      url: cp.url,
      apiKey: key,
      webSocket: (url, headers) => {
        opened.push({ url, headers });
        return new WebSocket(url) as unknown as WebSocketLike;
      },
    }),
  );
}

/** a session whose output is collected as text */
async function open(argv: string[], opts: { tty?: boolean; cols?: number; rows?: number } = {}, key = user.key): Promise<{ s: PodExecSocket; out: () => string; err: () => string }> {
  let out = '';
  let err = '';
  const dec = [new TextDecoder(), new TextDecoder()];
  const s = await clientOf(key).execSession(podId, argv, opts, { stdout: (d) => (out += dec[0]!.decode(d, { stream: true })), stderr: (d) => (err += dec[1]!.decode(d, { stream: true })) });
  return { s, out: () => out, err: () => err };
}

beforeAll(async () => {
  const image = await ensureTestImage();
  host = await startTestHost({ name: `client-exec-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-client-exec' });
  user = await cp.newAccount('read_write');
  const pod = await cp.api('/v2/pods', { key: user.key, method: 'POST', json: { name: 'client-exec', image, args: `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } } });
  podId = ((await pod.json()) as { id: string }).id;
  await waitFor('pod RUNNING', async () => ((await (await cp.api(`/v2/pods/${podId}`, { key: user.key })).json()) as { status: string }).status === 'RUNNING', 90_000, 200);
}, 180_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe('PodExecSocket against a real pod', () => {
  test('a terminal by ticket: the socket carries no credential, tty is a pts, resize reaches stty, exit 3 is the end', async () => {
    opened.length = 0;
    const { s, out } = await open(['sh'], { tty: true, cols: 91, rows: 17 });
    expect(opened).toHaveLength(1);
    expect(opened[0]!.headers).toEqual({});
    const url = new URL(opened[0]!.url);
    expect(url.searchParams.get('ticket')).toMatch(/^gfx_/);
    expect(url.searchParams.getAll('command')).toEqual(['sh']);
    expect(opened[0]!.url).not.toContain(user.key);
    s.write('tty\n');
    await waitFor('tty', async () => /^\/dev\/pts\/\d+\r?$/m.test(out()), 10_000, 100);
    // docker exec -t sets the container's terminal size a moment after it starts (and after each
    // resize): asked again until it shows
    const sttySize = (size: string) =>
      waitFor(`stty size ${size}`, async () => {
        s.write('stty size\n');
        await new Promise((r) => setTimeout(r, 200));
        return new RegExp(`^${size}\\r?$`, 'm').test(out());
      }, 10_000, 0);
    await sttySize('17 91');
    s.resize(132, 43);
    await sttySize('43 132');
    s.write('exit 3\n');
    expect(await s.ended).toEqual({ code: 3, reason: 'exited' });
  }, 30_000);

  test('without a terminal: stdout and stderr apart, endInput() is EOF', async () => {
    const { s, out, err } = await open(['sh', '-c', 'cat; echo oops >&2']);
    s.write('héllo\n');
    s.write(new TextEncoder().encode('bytes\n'));
    s.endInput();
    expect(await s.ended).toEqual({ code: 0, reason: 'exited' });
    expect(out()).toBe('héllo\nbytes\n');
    expect(err()).toBe('oops\n');
  }, 30_000);

  test('close() ends the session on the client\'s word', async () => {
    const { s } = await open(['sleep', '60'], { tty: true });
    s.close();
    expect(await s.ended).toEqual({ code: null, reason: 'client closed' });
  }, 30_000);

  test('refusals are the server\'s: another account\'s pod 404, a read key 403, before any socket', async () => {
    opened.length = 0;
    const other = await cp.newAccount('read_write');
    const e404 = await open(['sh'], {}, other.key).catch((e: unknown) => e);
    expect(e404).toBeInstanceOf(ApiError);
    expect((e404 as ApiError).status).toBe(404);
    const reader = (await (await cp.api('/v2/keys', { method: 'POST', json: { accountId: user.accountId, name: 'reader', scope: 'read' } })).json()) as { key: string };
    const e403 = await open(['sh'], {}, reader.key).catch((e: unknown) => e);
    expect((e403 as ApiError).status).toBe(403);
    expect(opened).toEqual([]);
  }, 30_000);

  test('a refused upgrade (a bad size) rejects with the 422 under ws', async () => {
    const e = await open(['sh'], { tty: true, cols: 5000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(422);
  }, 30_000);
});

test('frames: stdin is channel 0 then UTF-8; stdout/stderr/exit/error decode; unknown ones are ignored; resize is clamped', () => {
  expect([...stdinFrame('é')]).toEqual([0, 0xc3, 0xa9]);
  expect([...stdinFrame(new Uint8Array([3]))]).toEqual([0, 3]);
  const out = decodeFrame(new Uint8Array([1, 104, 105]).buffer);
  expect(out.kind === 'stdout' && new TextDecoder().decode(out.data)).toBe('hi');
  expect(decodeFrame(new Uint8Array([2, 33])).kind).toBe('stderr');
  expect(decodeFrame(new Uint8Array([9, 33])).kind).toBe('other');
  expect(decodeFrame('{"exit":{"code":3,"reason":"exited"}}')).toEqual({ kind: 'exit', exit: { code: 3, reason: 'exited' } });
  expect(decodeFrame('{"exit":{"code":null,"reason":"idle timeout"}}')).toEqual({ kind: 'exit', exit: { code: null, reason: 'idle timeout' } });
  expect(decodeFrame('{"error":{"status":503,"code":"HOST_UNREACHABLE"}}')).toEqual({ kind: 'error', problem: { status: 503, code: 'HOST_UNREACHABLE' } });
  expect(decodeFrame('not json').kind).toBe('other');
  expect(JSON.parse(resizeMessage(0, 5000.4))).toEqual({ resize: { cols: 1, rows: 1000 } });
});
