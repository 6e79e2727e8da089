// Docs whose commands run (docs/docs-tests.md): every shell block of README.md and docs/ (files
// this test has never seen included) is either run here, in order per file and in one bash per
// file (`set -euo pipefail`: a failing command fails the file's test, naming the block), against a
// test fleet (a control plane with its provisioner, one enrolled sshd test host, one more host for
// the enrolment examples), or marked `<!-- not run: … -->` on the line just before its fence.
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, removeContainersByLabel, removeNetworksByLabel, startTestHost, TEST_IMAGE, type TestHost } from '../harness/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { allShellBlocks, blockScript, shellBlocks, type ShellBlock } from './doc-blocks.ts';

const blocks = await allShellBlocks(REPO_ROOT);
const toRun = new Map<string, ShellBlock[]>();
for (const b of blocks) if (b.notRun === null) toRun.set(b.file, [...(toRun.get(b.file) ?? []), b]);

describe('the block finder', () => {
  test('finds shell blocks (indented, quoted, ~~~), reads marks only on the line just before the fence, skips other languages', () => {
    const md = [
      '# t',
      '<!-- not run: a GPU -->',
      '```sh',
      'nvidia-smi',
      '```',
      '',
      '<!-- not run: a GPU -->',
      '',
      '```bash',
      'echo unmarked: a blank line sits between',
      '```',
      '```json',
      '{"a": 1}',
      '```',
      '- a list item',
      '  ```console',
      '  $ echo one \\',
      '  >   two',
      '  one two',
      '  ```',
      '<!-- not-run: typo -->',
      '~~~shell',
      'true',
      '```',
      '~~~',
    ].join('\n');
    const found = shellBlocks('x.md', md);
    expect(found.map((b) => [b.line, b.lang, b.notRun, b.badMark])).toEqual([
      [3, 'sh', 'a GPU', null],
      [9, 'bash', null, null],
      [16, 'console', null, null],
      [22, 'shell', null, '<!-- not-run: typo -->'],
    ]);
    expect(blockScript(found[2]!)).toBe('echo one \\\n>   two');
    expect(found[3]!.body).toBe('true\n```');
  });
});

describe('every shell block of README.md and docs/', () => {
  test('a mark is exactly `<!-- not run: <reason> -->`, and a console block has `$ ` commands', () => {
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.filter((b) => b.badMark !== null).map((b) => `${b.file}:${b.line - 1}: ${b.badMark}`)).toEqual([]);
    const noCommand = blocks.filter((b) => b.notRun === null && blockScript(b).trim() === '');
    expect(noCommand.map((b) => `${b.file}:${b.line}: an unmarked block with no command to run`)).toEqual([]);
  });
});

describe.runIf(toRun.size > 0)('unmarked shell blocks run against a test fleet', () => {
  let cp: TestControlPlane;
  let enrolled: TestHost;
  let spare: TestHost;
  let enrolledId = '';
  let work = '';

  beforeAll(async () => {
    await ensureTestImage();
    const gpus = (n: number) => Array.from({ length: n }, () => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 }));
    [enrolled, spare] = await Promise.all([startTestHost({ name: `docs-a-${process.pid}`, gpus: gpus(4) }), startTestHost({ name: `docs-b-${process.pid}`, gpus: gpus(2) })]);
    cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300 });
    enrolledId = await enrolTestHost(cp, enrolled, { dataCenterId: 'dc-1' });
    work = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-docs-'));
    await writeFile(path.join(work, 'gpufleet'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(REPO_ROOT, 'bin/gpufleet.js')}" "$@"\n`);
    await chmod(path.join(work, 'gpufleet'), 0o755);
  }, 180_000);

  afterAll(async () => {
    // every host the blocks enrolled too: its containers and networks go with the fleet
    const hosts = cp ? (((await (await cp.api('/v2/hosts')).json().catch(() => ({}))) as { hosts?: { id: string }[] }).hosts ?? []) : [];
    await disposeHostWorld({ cp, host: enrolled, hostId: enrolledId });
    for (const h of hosts) {
      await removeContainersByLabel(`gpufleet.host=${h.id}`).catch(() => undefined);
      await removeNetworksByLabel(`gpufleet.host=${h.id}`).catch(() => undefined);
    }
    await spare?.dispose();
    if (work) await rm(work, { recursive: true, force: true });
  }, 120_000);

  for (const [file, fileBlocks] of toRun) {
    test(`${file}: ${fileBlocks.map((b) => `line ${b.line}`).join(', ')}`, async () => {
      const script = [
        'set -euo pipefail',
        `trap 'echo "docs-test: exit $? in the block at $DOC_BLOCK" >&2' ERR`,
        ...fileBlocks.flatMap((b) => [`DOC_BLOCK='${b.file}:${b.line}'; echo "docs-test: $DOC_BLOCK" >&2`, blockScript(b)]),
        '',
      ].join('\n');
      const env = {
        ...process.env,
        PATH: `${work}:${process.env.PATH ?? ''}`,
        TMPDIR: work,
        GPUFLEET_URL: cp.url,
        GPUFLEET_API_KEY: cp.adminKey,
        GPUFLEET_DEV: '1',
        NO_COLOR: '1',
        GPU_HOST: `root@${spare.address}:${spare.port}`,
        GPU_HOST_KEY: spare.privateKeyPath,
        IMAGE: TEST_IMAGE,
      };
      const r = await runBash(script, env, 300_000);
      expect(r.code, `${file}'s blocks failed:\n${r.output.slice(-6000)}`).toBe(0);
    }, 330_000);
  }
});

/** bash reading `script` on stdin, in its own process group (killed whole past `timeoutMs`) */
function runBash(script: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-s'], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\ndocs-test: past ${timeoutMs} ms, killed`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdin.end(script);
  });
}
