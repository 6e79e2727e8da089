// The GPU health device check (issue 22, docs/gpu-health.md "Device check"): the real GPU watcher
// (provisioner/gpu-watcher.ts, through the real SshPool) against a real GPU's nvidia-smi and kernel
// log for a while, printing what it saw as JSON: each GPU's health and incidents (a healthy GPU must
// show none), kernel lines read, polls made, the raw nvidia-smi answers and the fields it chose.
//
// The device machine has no sshd, so this starts an ssh2 Server on 127.0.0.1 as the host's SSH server
// (each exec is `/bin/sh -c <command>` in a session of its own, its stdin closed when the channel
// closes, as sshd does): a stand-in for OpenSSH only; everything on the control plane's side is real.
//
//   npx tsx bench/gpu-health-device.ts                 # on a GPU machine; GPU_DEVICE_SECONDS (60), OUT
//   esbuild bundle: see docs/gpu-health.md
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { GpuHealthSignal, GpuUsageHistory, parseMetricsWindow, type GpuHealthSignalEvent, type Services } from '../core/index.ts';
import { parseGpuCsv, SshPool, type SshTarget } from '../fleet/index.ts';
import { withHostConditions, type HostRecord } from '../model/index.ts';
import { HostGpuWatcher } from '../provisioner/index.ts';
import { LowdbStore } from '../store/index.ts';

const SECONDS = Number(process.env.GPU_DEVICE_SECONDS ?? 60);
const POLL_SECONDS = Number(process.env.GPU_DEVICE_POLL_SECONDS ?? 5);
const { Server, utils } = ssh2;
const PATH = `${process.env.PATH ?? ''}:/usr/local/nvidia/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** An SSH server for one client key that runs each exec with /bin/sh -c, stdin/stdout/stderr piped. */
async function startSshServer(clientPublic: string): Promise<{ port: number; hostKey: string; close(): void; execs: string[] }> {
  const hostKey = utils.generateKeyPairSync('ed25519').private;
  const allowed = utils.parseKey(clientPublic);
  if (allowed instanceof Error) throw allowed;
  const execs: string[] = [];
  const server = new Server({ hostKeys: [hostKey] }, (client) => {
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey' || ctx.key.data.compare(allowed.getPublicSSH()) !== 0) return ctx.reject(['publickey']);
      if (!ctx.signature) return ctx.accept();
      return allowed.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) ? ctx.accept() : ctx.reject(['publickey']);
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('exec', (accept, _reject, info) => {
          const stream = accept();
          execs.push(info.command.slice(0, 120));
          // a session of its own, as sshd gives each command: the watch's `kill 0` ends it and no more
          const child = spawn('/bin/sh', ['-c', info.command], { detached: true, env: { ...process.env, PATH }, stdio: ['pipe', 'pipe', 'pipe'] });
          stream.on('data', (d: Buffer) => child.stdin.write(d));
          stream.on('end', () => child.stdin.end());
          stream.on('close', () => child.stdin.destroy());
          child.stdin.on('error', () => undefined);
          child.stdout.on('data', (d: Buffer) => stream.write(d));
          child.stderr.on('data', (d: Buffer) => stream.stderr.write(d));
          child.on('close', (code) => {
            try {
              stream.exit(code ?? 255);
              stream.end();
            } catch {
              // the client closed first
            }
          });
        });
      });
    });
    client.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return { port: typeof addr === 'object' && addr ? addr.port : 0, hostKey, close: () => server.close(), execs };
}

async function main(): Promise<void> {
  const started = Date.now();
  const client = utils.generateKeyPairSync('ed25519');
  const ssh = await startSshServer(client.public);
  const pool = new SshPool();
  const target: SshTarget = { hostId: 'host_device', address: '127.0.0.1', port: ssh.port, user: 'root', privateKey: client.private, pinnedFingerprint: null };
  const { fingerprint } = await pool.connect(target);
  const pinned = { ...target, pinnedFingerprint: fingerprint };
  // the GPUs as enrolment's probe reads them (its docker checks are left out: the device has no Docker)
  const q = await pool.exec(pinned, 'nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version --format=csv,noheader,nounits');
  const { gpus, driverVersion } = parseGpuCsv(q.stdout);
  const dir = await mkdtemp(join(tmpdir(), 'gpufleet-device-'));
  const store = await LowdbStore.open({ dir });
  const now = new Date().toISOString();
  const host: HostRecord = withHostConditions({
    id: target.hostId, address: target.address, port: target.port, user: 'root', privateKeyEnc: '', hostKeySha256: fingerprint, rejectedHostKeySha256: null,
    dataCenterId: 'device', cloud: 'SECURE', drained: false, status: 'READY', statusReason: null, missedHeartbeats: 0, lastSeenAt: now, createdAt: now,
    facts: { arch: process.arch, cpuCount: 0, cpuModel: '', memoryGb: 0, diskFreeGb: 0, dockerVersion: '', dockerRuntimes: [], driverVersion, cudaVersion: null, gpus },
  }, now);
  await store.transact((tx) => tx.put('hosts', host));
  const signal = new GpuHealthSignal();
  const signals: GpuHealthSignalEvent[] = [];
  signal.subscribe((e) => void signals.push(e));
  // the watcher's polls also feed the utilisation and memory history (docs/gpu-metrics.md): reported below
  const gpuUsage = new GpuUsageHistory();
  const services = { store, sshPool: pool, fleet: { target: () => pinned }, gpuHealthSignal: signal, gpuUsage, telemetry: { provisioner: { gpusSampled: () => undefined } } } as unknown as Services;
  const watcher = new HostGpuWatcher(services, host.id, { pollSeconds: POLL_SECONDS, smiTimeoutSeconds: 10, positionWriteMs: 30_000 }, () => true);
  const watchStarted = Date.now();
  watcher.start();
  let firstPollMs: number | null = null;
  const until = watchStarted + SECONDS * 1000;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    if (firstPollMs === null && (watcher.stats?.polls ?? 0) > 0) firstPollMs = Date.now() - watchStarted;
  }
  const stats = watcher.stats;
  await watcher.stop();
  const after = (await store.get('hosts', host.id))!;
  await pool.closeAll();
  ssh.close();
  await store.close?.();
  const report = {
    device: 'nvidia-smi and the kernel log of this machine, through the real SshPool and GPU watcher',
    seconds: SECONDS,
    pollSeconds: POLL_SECONDS,
    wallSeconds: (Date.now() - started) / 1000,
    firstPollMs,
    sessions: watcher.sessions,
    execs: ssh.execs.length,
    gpus: after.facts.gpus.map((g) => ({ index: g.index, uuid: g.uuid, name: g.name, busId: g.busId ?? null, health: g.health ?? 'HEALTHY', incidents: g.incidents ?? [] })),
    conditions: after.conditions,
    signals,
    watch: after.gpuWatch,
    // each GPU's last poll and its 10 s buckets of the run (GET /v2/hosts/{id}/metrics's answer)
    usage: gpuUsage.query(after, parseMetricsWindow({ from: String(Math.floor(watchStarted / 1000)), step: '10s' }, Date.now())).map((g) => ({ index: g.index, current: g.current, buckets: g.buckets.filter((b) => b.samples > 0) })),
    stats,
  };
  const text = JSON.stringify(report, null, 2);
  console.log(text);
  if (process.env.OUT) await writeFile(join(process.env.OUT, 'gpu-health-device.json'), text);
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
