// The host-side scripts that ready a tenant network and its isolation rules, run by `sh` and `bash`
// against fake `docker`, `iptables` and `iptables-save` commands that log what they are asked.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { isolationScript } from '../../provisioner/tenant-firewall.ts';
import { NETWORK_SETUP_EXIT, tenantNetworkScript } from '../../provisioner/tenant-network-setup.ts';
import { tenantBridgeName } from '../../provisioner/tenant-network.ts';

let dir = '';
const SHELLS = ['sh', 'bash'];
const bridge = tenantBridgeName(`h-${process.pid}`, 'acct_1');
const other = tenantBridgeName(`h-${process.pid}`, 'acct_2');
const RULES = [`-A GPUFLEET-ISOLATION -i ${bridge} -o ${bridge} -j RETURN`, '-A GPUFLEET-ISOLATION -j DROP', '-A DOCKER-USER -i gf+ -o gf+ -j GPUFLEET-ISOLATION', '-A FORWARD -j DOCKER-USER'];

/** A fake command: logs its argv (one line) and exits with what `rule` prints for them (a shell case). */
function fake(name: string, body: string): void {
  writeFileSync(join(dir, 'bin', name), `#!/bin/sh\necho "${name} $*" >> "${join(dir, 'log')}"\n${body}\n`);
  chmodSync(join(dir, 'bin', name), 0o755);
}

function run(shell: string, script: string): { code: number; log: string[] } {
  writeFileSync(join(dir, 'log'), '');
  let code = 0;
  try {
    execFileSync(shell, ['-c', script], { env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin` }, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    code = (e as { status: number }).status;
  }
  return { code, log: readFileSync(join(dir, 'log'), 'utf8').split('\n').filter((l) => l) };
}

/** The filter table iptables-save prints: our rules and Docker's around them. */
function savedTable(rules: string[]): void {
  const table = ['*filter', ':FORWARD ACCEPT [0:0]', ...rules, '-A FORWARD -j DOCKER-ISOLATION-STAGE-1', 'COMMIT'].join('\n');
  writeFileSync(join(dir, 'table'), `${table}\n`);
  fake('iptables-save', `cat "${join(dir, 'table')}"`);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gf-netsetup-'));
  execFileSync('mkdir', [join(dir, 'bin')]);
  // every -C finds nothing; every other call succeeds
  fake('iptables', 'case "$*" in *" -C "*|*"-n -L"*) exit 1;; esac; exit 0');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sub = (script: string) => `( ${script}\n)`;

test('with every rule in place, asserting them reads the table once and changes nothing', () => {
  savedTable(RULES);
  for (const shell of SHELLS) expect(run(shell, sub(isolationScript([bridge]))), shell).toEqual({ code: 0, log: ['iptables-save -t filter'] });
});

test('a missing rule, or one only part of a line, is checked and added with iptables; so is everything when iptables-save fails', () => {
  for (const rules of [RULES.slice(1), [`${RULES[0]} -m comment --comment x`, ...RULES.slice(1)], RULES.slice(0, 3)]) {
    savedTable(rules);
    for (const shell of SHELLS) {
      const { code, log } = run(shell, sub(isolationScript([bridge])));
      expect(code, shell).toBe(0);
      expect(log, shell).toContain(`iptables -w 5 -I GPUFLEET-ISOLATION 1 -i ${bridge} -o ${bridge} -j RETURN`);
      expect(log.filter((l) => l.includes(' -C ')).length, shell).toBe(4);
    }
  }
  fake('iptables-save', 'exit 1');
  expect(run('sh', sub(isolationScript([bridge]))).log.filter((l) => l.includes(' -I ') || l.includes(' -A '))).toHaveLength(4);
  // another bridge's RETURN does not stand for this one's
  savedTable([`-A GPUFLEET-ISOLATION -i ${other} -o ${other} -j RETURN`, ...RULES.slice(1)]);
  expect(run('sh', sub(isolationScript([bridge]))).log).toContain(`iptables -w 5 -I GPUFLEET-ISOLATION 1 -i ${bridge} -o ${bridge} -j RETURN`);
});

const network = { name: 'gpufleet-h-acct_1', bridge, labels: { 'gpufleet.host': 'h', 'gpufleet.account': 'acct_1' } };

test('a missing network is created on its bridge, its rules set before anything else runs; a failed create removes the spare networks and tries once more', () => {
  savedTable(RULES);
  // docker knows no network; the first create fails (the address pools ran out), the next succeeds
  fake('docker', `case "$1 $2" in "network inspect") exit 1;; "network create") [ -e "${join(dir, 'made')}" ] && exit 0; touch "${join(dir, 'made')}"; exit 1;; esac; exit 0`);
  for (const shell of SHELLS) {
    rmSync(join(dir, 'made'), { force: true });
    const { code, log } = run(shell, `${tenantNetworkScript(network, { askDocker: false, spare: ['gpufleet-h-acct_9', network.name] })}echo ran >> "${join(dir, 'log')}"`);
    expect(code, shell).toBe(0);
    const create = `docker network create --driver=bridge --opt=com.docker.network.bridge.name=${bridge} --label=gpufleet.host=h --label=gpufleet.account=acct_1 -- gpufleet-h-acct_1`;
    expect(log, shell).toEqual([
      `docker network inspect --format {{index .Options "com.docker.network.bridge.name"}} gpufleet-h-acct_1`,
      create,
      // the pod's own network is never one of those removed
      'docker network rm -- gpufleet-h-acct_9',
      create,
      'iptables-save -t filter',
      'ran',
    ]);
  }
  // without spare networks a failed create fails the script before the container
  fake('docker', 'case "$1 $2" in "network create") exit 1;; "network inspect") exit 1;; esac; exit 0');
  const failed = run('sh', `${tenantNetworkScript(network, { askDocker: false, spare: [] })}echo ran >> "${join(dir, 'log')}"`);
  expect(failed.code).toBe(NETWORK_SETUP_EXIT);
  expect(failed.log.filter((l) => l === 'ran' || l.startsWith('docker network rm'))).toEqual([]);
});

test('rules that cannot be set stop the script before the container', () => {
  fake('iptables-save', 'exit 1');
  fake('iptables', 'exit 1');
  fake('docker', 'exit 0');
  for (const shell of SHELLS) {
    const { code, log } = run(shell, `${tenantNetworkScript(network, { askDocker: true, spare: [] })}echo ran >> "${join(dir, 'log')}"`);
    expect(code, shell).toBe(NETWORK_SETUP_EXIT);
    expect(log, shell).not.toContain('ran');
  }
});

test('only validated bridge names reach the script', () => {
  for (const bad of ['br-0123456789', 'gf0123456789abc; reboot', 'gf+']) expect(() => tenantNetworkScript({ ...network, bridge: bad }, { askDocker: false, spare: [] })).toThrow(/not a tenant bridge/);
});
