// The SSH server test image (test/gateway/pod-ssh.test.ts): Debian's openssh-server from this machine
// (`/usr/sbin/sshd`, `sftp-server`, the libraries ldd lists) on the busybox base of the Node images,
// made with `docker import` like every test image (no registry, no network). It starts as the public
// cloud's images do: PUBLIC_KEY into root's authorized_keys, then sshd in the foreground on 22; keys
// only, root allowed, SFTP for scp. The host key is made at build.
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layBusyboxRoot, sharedLibraries } from './node-worker-image.ts';
import { importRootfs, InputHash, run } from './worker-image-build.ts';
import { ensure, once } from './worker-images.ts';

export const SSHD_REPO = 'gpufleet-test/sshd';
const SSHD = '/usr/sbin/sshd';
const SFTP = '/usr/lib/openssh/sftp-server';
const LAYOUT_VERSION = 'sshd-1';

const SSHD_CONFIG = `Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile /run/sshd.pid
Subsystem sftp ${SFTP}
`;

/** what the public cloud's images do at start (their start.sh), and nothing more */
const START = `#!/bin/sh
mkdir -p /root/.ssh && chmod 700 /root/.ssh
printf '%s\\n' "$PUBLIC_KEY" > /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys
exec ${SSHD} -D -e
`;

/** Ensures the image exists; resolves with its ref. */
export function ensureSshdImage(): Promise<string> {
  return once('sshd', async () => {
    const libs = [...new Set([...(await sharedLibraries(SSHD)), ...(await sharedLibraries(SFTP))])].sort();
    const hash = new InputHash().text(LAYOUT_VERSION).text(SSHD_CONFIG).text(START);
    for (const f of [SSHD, SFTP, ...libs]) await hash.file(f);
    const ref = `${SSHD_REPO}:${hash.digest()}`;
    return ensure(ref, SSHD_REPO, 5 * 60_000, () => build(ref, libs));
  });
}

async function build(ref: string, libs: string[]): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gpufleet-sshd-'));
  try {
    await layBusyboxRoot(root, libs);
    await copyFile(SSHD, join(root, 'bin', 'sshd')); // /usr/sbin is a link to /bin
    await mkdir(join(root, 'usr', 'lib', 'openssh'), { recursive: true });
    await copyFile(SFTP, join(root, SFTP));
    await chmod(join(root, 'bin', 'sshd'), 0o755);
    await chmod(join(root, SFTP), 0o755);
    // sshd's privilege separation: its user and an empty root-owned directory to chroot into
    await writeFile(join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nsshd:x:100:65534::/run/sshd:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n');
    await mkdir(join(root, 'run', 'sshd'), { recursive: true, mode: 0o755 });
    await chmod(join(root, 'root'), 0o700);
    await mkdir(join(root, 'etc', 'ssh'));
    await writeFile(join(root, 'etc', 'ssh', 'sshd_config'), SSHD_CONFIG);
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'gpufleet-test-sshd', '-f', join(root, 'etc', 'ssh', 'ssh_host_ed25519_key')]);
    await writeFile(join(root, 'start.sh'), START, { mode: 0o755 });
    await importRootfs(root, ref, ['ENV PATH=/usr/local/bin:/bin', 'CMD ["/start.sh"]']);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
