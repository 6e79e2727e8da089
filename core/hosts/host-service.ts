// Host lifecycle: enroll (trust on first use, probe, record), refresh (re-detect GPUs), drain,
// remove, and accepting a changed host key. Progress is reported through a callback so the CLI can
// show a spinner and the API can log it.
import { randomUUID } from 'node:crypto';
import { fail400, GpufleetError, mergeProbedGpus, OPERATOR_ACTOR, parseDuration, podConditions, setConditions, withHostConditions } from '../../model/index.ts';
import type { CloudTier, HostDrain, HostFacts, HostRecord, Ipv4Range } from '../../model/index.ts';
import { parseIpv4Range, rangesOverlap } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { SecretBox } from '../../store/index.ts';
import { parseIpv4Addresses, probeHost, type SshPool, type SshTarget } from '../../fleet/index.ts';
import { checkOverlayAddress } from './overlay-address.ts';

export interface EnrollInput {
  address: string;
  port?: number;
  user: string;
  privateKey: string;
  dataCenterId?: string;
  cloud?: CloudTier;
  /** the host's address for the overlay, when not the default (docs/networking.md); checked against the host's own */
  overlayAddress?: string;
}

export type Progress = (step: string) => void;

export const DEFAULT_DATA_CENTER = 'dc-1';

/** `user@host[:port]`, with [v6]:port accepted. */
export function parseSshAddress(text: string): { user: string; address: string; port: number } {
  const m = /^([^@\s]+)@(\[[^\]]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m) throw new GpufleetError('VALIDATION_FAILED', `"${text}" is not user@host[:port].`, { errors: ['$.ssh: must be user@host[:port]'] });
  const port = m[3] ? Number(m[3]) : 22;
  if (port < 1 || port > 65535) throw new GpufleetError('VALIDATION_FAILED', `Port ${port} is out of range.`, { errors: ['$.ssh: port out of range'] });
  return { user: m[1]!, address: m[2]!.replace(/^\[|\]$/g, ''), port };
}

/** What is left of gpufleet on a host being removed: its containers and account networks (set by the provisioner). */
export type HostDecommission = (host: HostRecord, target: SshTarget) => Promise<void>;

export class HostService {
  private decommission: HostDecommission | null = null;

  constructor(
    private readonly store: Store,
    readonly pool: SshPool,
    private readonly secrets: SecretBox,
    /** GPUFLEET_OVERLAY_CIDR: a host whose addresses or Docker pools overlap it is refused (docs/networking.md) */
    private readonly overlayRange: Ipv4Range | null = null,
  ) {}

  /** The provisioner's clean-up of a removed host (provisioner/host-decommission.ts); null unsets it. */
  useDecommission(fn: HostDecommission | null): void {
    this.decommission = fn;
  }

  /** 422 HOST_REQUIREMENT when the host's own addresses or Docker's pools there overlap the overlay range */
  private assertOverlayClear(facts: HostFacts): void {
    const range = this.overlayRange;
    if (!range) return;
    for (const [what, list] of [['address', facts.addresses ?? []], ["Docker address pool", facts.dockerPools ?? []]] as const) {
      const clash = list.find((c) => {
        const r = parseIpv4Range(c);
        return r !== null && rangesOverlap(r, range);
      });
      if (clash)
        throw new GpufleetError(
          'HOST_REQUIREMENT',
          `the host's ${what} ${clash} overlaps the overlay range GPUFLEET_OVERLAY_CIDR=${range.cidr}: pods' private addresses would clash with it; ` +
            'pick another overlay range for the fleet or renumber the host (docs/networking.md)',
          { fields: { requirement: 'overlay-range', clash, overlayCidr: range.cidr } },
        );
    }
  }

  target(host: HostRecord): SshTarget {
    return {
      hostId: host.id,
      address: host.address,
      port: host.port,
      user: host.user,
      privateKey: this.secrets.open(host.privateKeyEnc),
      pinnedFingerprint: host.hostKeySha256,
    };
  }

  async enroll(input: EnrollInput, progress: Progress = () => undefined): Promise<HostRecord> {
    const existing = (await this.store.list('hosts')).find(
      (h) => h.address === input.address && h.port === (input.port ?? 22),
    );
    if (existing) throw new GpufleetError('CONFLICT', `${input.address}:${input.port ?? 22} is already enrolled as ${existing.id}.`);
    const id = `host_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const target: SshTarget = {
      hostId: id,
      address: input.address,
      port: input.port ?? 22,
      user: input.user,
      privateKey: input.privateKey,
      pinnedFingerprint: null,
    };
    try {
      progress(`connecting to ${input.user}@${input.address}:${target.port}`);
      const { fingerprint } = await this.pool.connect(target);
      progress(`host key ${fingerprint} (trusted on first use)`);
      progress('probing CPU, memory, disk, Docker and GPUs');
      const facts = await probeHost((cmd) => this.pool.exec({ ...target, pinnedFingerprint: fingerprint }, cmd, { allowFailure: true }));
      this.assertOverlayClear(facts);
      const overlayAddress = input.overlayAddress === undefined ? undefined : checkOverlayAddress(input.overlayAddress, facts.addresses ?? [], this.overlayRange);
      progress(`found ${facts.gpus.length} GPU(s)${facts.gpus[0] ? ` (${facts.gpus[0].name})` : ''}, ${facts.cpuCount} CPUs, Docker ${facts.dockerVersion}`);
      const now = new Date().toISOString();
      const host: HostRecord = {
        id,
        address: input.address,
        port: target.port,
        user: input.user,
        privateKeyEnc: this.secrets.seal(input.privateKey),
        hostKeySha256: fingerprint,
        rejectedHostKeySha256: null,
        dataCenterId: input.dataCenterId ?? DEFAULT_DATA_CENTER,
        cloud: input.cloud ?? 'SECURE',
        drained: false,
        status: 'READY',
        statusReason: null,
        missedHeartbeats: 0,
        lastSeenAt: now,
        facts,
        ...(overlayAddress !== undefined ? { overlayAddress } : {}),
        createdAt: now,
      };
      await this.store.transact((tx) => tx.put('hosts', withHostConditions(host, now)), { actor: OPERATOR_ACTOR });
      progress(`enrolled as ${id}`);
      return host;
    } finally {
      // the pool keyed this connection by the new id; the provisioner dials again with the record
      await this.pool.close(id);
    }
  }

  async get(id: string): Promise<HostRecord> {
    const host = await this.store.get('hosts', id);
    if (!host) throw new GpufleetError('NOT_FOUND', `Host ${id} is not enrolled.`);
    return host;
  }

  /** Probes again (GPUs added or failed, driver upgraded) and records what the host shows now. */
  async refresh(id: string): Promise<HostRecord> {
    const host = await this.get(id);
    const target = this.target(host);
    const facts = await probeHost((cmd) => this.pool.exec(target, cmd, { allowFailure: true }));
    this.assertOverlayClear(facts);
    const now = new Date().toISOString();
    // health and incidents stay with their GPUs; a GPU no longer found stays, in FAILURE (docs/gpu-health.md)
    return this.update(id, (h) => ({ ...h, facts: { ...facts, gpus: mergeProbedGpus(h.facts.gpus, facts.gpus, now) }, lastSeenAt: now }));
  }

  /**
   * Drained hosts take no new pods; pods already there keep running (a cordon). With a `deadline` (a
   * Go duration or seconds) the provisioner also moves every movable pod off and stops the rest when
   * it passes (docs/gpu-health.md, "Acting on it"); undraining cancels a drain in progress (pods moved stay moved).
   */
  async drain(id: string, drained = true, deadline?: unknown): Promise<HostRecord> {
    const deadlineMs = deadline === undefined ? null : parseDrainDeadline(deadline, drained);
    return this.store.transact(async (tx) => {
      const h = await tx.get('hosts', id);
      if (!h) throw new GpufleetError('NOT_FOUND', `Host ${id} is not enrolled.`);
      let drain = drained ? (h.drain ?? null) : null;
      if (deadlineMs !== null) {
        const now = Date.now();
        const inProgress = drain && !drain.finishedAt ? drain : null;
        const total = (await tx.list('pods', { hostId: id })).filter((p) => p.desiredStatus === 'RUNNING' && p.status !== 'TERMINATED').length;
        const next: HostDrain = inProgress
          ? { ...inProgress, deadline: new Date(now + deadlineMs).toISOString() }
          : { startedAt: new Date(now).toISOString(), deadline: new Date(now + deadlineMs).toISOString(), total, moved: 0, stopped: 0, moving: [], finishedAt: null };
        drain = next;
      }
      const next = withHostConditions({ ...h, drained, drain, status: h.status === 'UNREACHABLE' ? h.status : drained ? 'DRAINING' : 'READY' });
      tx.put('hosts', next);
      return next;
    }, { actor: OPERATOR_ACTOR });
  }

  /**
   * An operator says an unreachable host is gone for good (powered off, unplugged): it is lost now,
   * and pods with a network volume move too (docs/gpu-health.md, "Acting on it"). Refused while the host answers.
   */
  async confirmLost(id: string): Promise<HostRecord> {
    return this.store.transact(async (tx) => {
      const h = await tx.get('hosts', id);
      if (!h) throw new GpufleetError('NOT_FOUND', `Host ${id} is not enrolled.`);
      if (h.status !== 'UNREACHABLE')
        throw new GpufleetError('CONFLICT', `Host ${id} answers its heartbeats (${h.status}); only an unreachable host can be declared lost. Drain it with a deadline to move its pods.`);
      const now = new Date().toISOString();
      const next = withHostConditions({ ...h, lost: { since: h.lost?.since ?? h.lastSeenAt ?? now, at: h.lost?.at ?? now, confirmed: true } });
      tx.put('hosts', next);
      return next;
    }, { actor: OPERATOR_ACTOR });
  }

  /**
   * Names the host's address for the overlay (null: back to the default), checked against the addresses
   * the host has now, read over its SSH connection (docs/networking.md, "A host's overlay address")
   */
  async setOverlayAddress(id: string, addr: string | null): Promise<HostRecord> {
    const host = await this.get(id);
    let overlayAddress: string | null = null;
    if (addr !== null) {
      const res = await this.pool.exec(this.target(host), 'ip -o -4 addr show', { allowFailure: true });
      if (res.code !== 0) throw new GpufleetError('SSH_COMMAND_FAILED', `ip -o -4 addr show on ${host.address} failed: ${res.stderr.trim().slice(0, 300)}`);
      overlayAddress = checkOverlayAddress(addr, parseIpv4Addresses(res.stdout), this.overlayRange);
    }
    return this.update(id, (h) => ({ ...h, overlayAddress }));
  }

  /** Re-pins the key the host presented after a mismatch (an admin checked it out of band). */
  async acceptHostKey(id: string, fingerprint?: string): Promise<HostRecord> {
    const host = await this.get(id);
    const presented = fingerprint ?? host.rejectedHostKeySha256;
    if (!presented) throw new GpufleetError('CONFLICT', `Host ${id} has presented no new host key.`);
    await this.pool.close(id);
    return this.update(id, (h) => ({ ...h, hostKeySha256: presented, rejectedHostKeySha256: null, statusReason: null, missedHeartbeats: 0 }));
  }

  /** Refuses while pods live on the host, unless forced (their pods then become ERROR). */
  /**
   * Removes the host from the fleet; with `force`, its pods become ERROR first. Then, best effort, what
   * gpufleet left on the host goes with it (containers, account networks and their isolation rules):
   * answers why that clean-up could not be done (the host unreachable, …), or null.
   */
  async remove(id: string, force = false): Promise<string | null> {
    const removed = await this.store.transact(async (tx) => {
      const host = await tx.get('hosts', id);
      if (!host) throw new GpufleetError('NOT_FOUND', `Host ${id} is not enrolled.`);
      const live = (await tx.list('pods', { hostId: id })).filter((p) => p.status !== 'TERMINATED');
      if (live.length > 0 && !force)
        throw new GpufleetError('IN_USE', `Host ${id} still has ${live.length} pod(s): ${live.slice(0, 5).map((p) => p.id).join(', ')}. Drain it and move them, or remove with force.`);
      const now = new Date().toISOString();
      for (const p of live) {
        const conditions = setConditions(p.conditions, [podConditions.hostRemoved(), podConditions.containerHostRemoved()], now);
        tx.put('pods', { ...p, status: 'ERROR', desiredStatus: 'EXITED', allocated: false, gpuUuids: [], hostId: null, statusReason: `host ${id} was removed from the fleet`, conditions, updatedAt: now });
      }
      tx.delete('hosts', id);
      return host;
    }, { actor: OPERATOR_ACTOR });
    let leftover: string | null = null;
    if (this.decommission)
      leftover = await this.decommission(removed, this.target(removed)).then(
        () => null,
        (e: unknown) => `its containers and networks could not be removed: ${e instanceof Error ? e.message : String(e)}`,
      );
    await this.pool.close(id);
    return leftover;
  }

  private async update(id: string, fn: (h: HostRecord) => HostRecord): Promise<HostRecord> {
    return this.store.transact(async (tx) => {
      const host = await tx.get('hosts', id);
      if (!host) throw new GpufleetError('NOT_FOUND', `Host ${id} is not enrolled.`);
      // every change of an operator's is one of the fields the conditions are read from
      const next = withHostConditions(fn(host));
      tx.put('hosts', next);
      return next;
    }, { actor: OPERATOR_ACTOR });
  }
}


/** a drain's deadline, at most this far away */
const MAX_DRAIN_DEADLINE_MS = 30 * 24 * 3_600_000;

/** The deadline of a drain in ms (400 BAD_REQUEST for anything but a positive duration up to 30 days). */
export function parseDrainDeadline(deadline: unknown, drained: boolean): number {
  if (!drained) fail400('A deadline goes with drained: true (drained: false cancels a drain).', ['$.deadline: only with drained: true']);
  const ms = parseDuration(deadline);
  if (ms === null || ms <= 0 || ms > MAX_DRAIN_DEADLINE_MS)
    fail400(`The drain deadline ${JSON.stringify(deadline)} is not a positive duration of at most 30 days: write it as Go does ("10m", "1h30m", "90s") or as a number of seconds.`, [
      '$.deadline: must be a Go-style duration ("10m") or seconds (600), more than 0 and at most 30 days',
    ]);
  return ms;
}
