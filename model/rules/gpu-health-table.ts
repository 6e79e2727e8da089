// The GPU health classification table (docs/gpu-health.md): data, versioned, each row naming its
// sources. Three sources disagree on some Xids (../shared/design/gpu-health-facts.md):
//   nvidia: NVIDIA's Xid catalog "Resolution Bucket (Immediate Action)" (mirrored in NVSentinel's
//           xiderrorsmapping.csv), or NVIDIA's docs (dynamic page retirement, row remapping);
//   dp:     NVIDIA k8s-device-plugin internal/rm/health.go ('ignored' or 'unhealthy');
//   aws:    AWS EKS node monitoring agent, WellKnownXidCodes ('Fatal' or 'Warning').
// `health` is gpufleet's decision; `why` says why where the sources disagree. Change a row: bump
// GPU_HEALTH_TABLE_VERSION (it is shown in docs and in each GPU's view through the incidents' action).
import type { GpuHealth } from '../records/host.ts';

export const GPU_HEALTH_TABLE_VERSION = 1;

/** What an Xid or counter does: APPLICATION changes nothing (not recorded); the rest open an incident. */
export type GpuRuleHealth = GpuHealth | 'APPLICATION';

export interface XidRow {
  xid: number;
  mnemonic: string;
  health: GpuRuleHealth;
  action: string;
  sources: { nvidia: string; dp: 'ignored' | 'unhealthy' | 'not listed'; aws: 'Fatal' | 'Warning' | 'not listed' };
  why?: string;
}

export interface CounterRow {
  /** the nvidia-smi field (or our name for a state: gpu.missing, nvidia-smi.failed) */
  counter: string;
  /** `rise`: the value went up since it was last counted; `set`: it became non-zero (Yes/Active) */
  trigger: 'rise' | 'set';
  mnemonic: string;
  health: GpuHealth;
  action: string;
  source: string;
  why?: string;
}

const APP = 'application error: the GPU stays healthy (NVIDIA RESTART_APP/IGNORE, the device plugin ignores it)';

export const XID_TABLE: readonly XidRow[] = [
  { xid: 13, mnemonic: 'GR_EXCEPTION', health: 'APPLICATION', action: 'RESTART_APP', sources: { nvidia: 'RESTART_APP', dp: 'ignored', aws: 'Warning' }, why: APP },
  { xid: 31, mnemonic: 'MMU_ERR_FLT', health: 'APPLICATION', action: 'RESTART_APP', sources: { nvidia: 'RESTART_APP', dp: 'ignored', aws: 'Warning' }, why: APP },
  { xid: 43, mnemonic: 'RESETCHANNEL_VERIF', health: 'APPLICATION', action: 'IGNORE', sources: { nvidia: 'IGNORE', dp: 'ignored', aws: 'Warning' }, why: APP },
  { xid: 45, mnemonic: 'PREEMPTIVE_REMOVAL', health: 'APPLICATION', action: 'WORKFLOW_XID_45', sources: { nvidia: 'WORKFLOW_XID_45', dp: 'ignored', aws: 'Warning' }, why: 'channels torn down after an application ended or was killed; the device plugin ignores it' },
  { xid: 68, mnemonic: 'NVDEC0', health: 'APPLICATION', action: 'RESTART_APP', sources: { nvidia: 'RESTART_APP', dp: 'ignored', aws: 'Warning' }, why: APP },
  { xid: 46, mnemonic: 'GPU_TIMEOUT', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 48, mnemonic: 'GPU_ECC_DBE', health: 'FAILURE', action: 'WORKFLOW_XID_48', sources: { nvidia: 'WORKFLOW_XID_48', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 54, mnemonic: 'PWR_REDUCED_CLOCKING', health: 'WARNING', action: 'CHECK_MECHANICALS', sources: { nvidia: 'CHECK_MECHANICALS', dp: 'unhealthy', aws: 'Fatal' }, why: 'the GPU runs, slower, until power or cooling is fixed: a hands-on check, not a reason to move running pods' },
  { xid: 62, mnemonic: 'PMU_HALT', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 63, mnemonic: 'DRAM_RETIREMENT_EVENT', health: 'WARNING', action: 'RESET_GPU', sources: { nvidia: 'IGNORE', dp: 'unhealthy', aws: 'Fatal' }, why: 'a row or page marked for remapping, applied at the next GPU reset: the uncorrectable error that caused it comes as its own Xid (48, 94, 95) and carries the failure; the pending remap keeps the GPU from passing a diagnostic until reset' },
  { xid: 64, mnemonic: 'DRAM_RETIREMENT_FAILURE', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 74, mnemonic: 'NVLINK_ERROR', health: 'FAILURE', action: 'WORKFLOW_NVLINK_ERR', sources: { nvidia: 'WORKFLOW_NVLINK_ERR', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 79, mnemonic: 'GPU_HAS_FALLEN_OFF_THE_BUS', health: 'FAILURE', action: 'RESTART_BM', sources: { nvidia: 'RESTART_BM', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 92, mnemonic: 'EXCESSIVE_SBE_INTERRUPTS', health: 'WARNING', action: 'IGNORE', sources: { nvidia: 'IGNORE', dp: 'unhealthy', aws: 'Warning' }, why: 'single-bit errors were corrected; a sign to watch (NVIDIA and AWS), not a failure' },
  { xid: 94, mnemonic: 'CONTAINED_ERROR', health: 'WARNING', action: 'RESTART_APP', sources: { nvidia: 'RESTART_APP', dp: 'unhealthy', aws: 'Warning' }, why: 'the ECC error was contained to the application that hit it (NVIDIA, AWS); the GPU keeps serving others' },
  { xid: 95, mnemonic: 'UNCONTAINED_ERROR', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 109, mnemonic: 'CTXSW_TIMEOUT', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'ignored', aws: 'Fatal' }, why: "NVIDIA's catalog and AWS say reset; the device plugin ignores it because a GPU it marks unhealthy stays so until the plugin restarts, while a gpufleet FAILURE returns after a passing diagnostic" },
  { xid: 119, mnemonic: 'GSP_RPC_TIMEOUT', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 120, mnemonic: 'GSP_ERROR', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 140, mnemonic: 'UNRECOVERABLE_ECC_ERROR_ESCAPE', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 143, mnemonic: 'GPU_INIT_ERROR', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 151, mnemonic: 'KEY_ROTATION', health: 'FAILURE', action: 'RESTART_VM', sources: { nvidia: 'RESTART_VM', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 154, mnemonic: 'GPU_RECOVERY_ACTION_CHANGED', health: 'WARNING', action: 'CONTACT_SUPPORT', sources: { nvidia: 'follow the Xid it refers to', dp: 'unhealthy', aws: 'Warning' }, why: 'it restates the action of another Xid, which is classified on its own line' },
  { xid: 155, mnemonic: 'NVLINK_SW_DEFINED', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 156, mnemonic: 'RESOURCE_RETIREMENT_EVENT', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
  { xid: 158, mnemonic: 'GPU_FATAL_TIMEOUT', health: 'FAILURE', action: 'RESET_GPU', sources: { nvidia: 'RESET_GPU', dp: 'unhealthy', aws: 'Fatal' } },
];

/** An Xid in no row: WARNING (shown, schedulable), so a new driver's codes are seen, never acted on blindly. */
export const UNKNOWN_XID = { mnemonic: 'UNKNOWN_XID', health: 'WARNING', action: 'CONTACT_SUPPORT' } as const;

export const COUNTER_TABLE: readonly CounterRow[] = [
  { counter: 'ecc.errors.uncorrected.volatile.total', trigger: 'rise', mnemonic: 'ECC_UNCORRECTED', health: 'FAILURE', action: 'RESET_GPU', source: 'NVIDIA dynamic page retirement: an uncorrectable (double-bit) ECC error, the counter behind Xid 48' },
  { counter: 'ecc.errors.uncorrected.aggregate.total', trigger: 'rise', mnemonic: 'ECC_UNCORRECTED_AGGREGATE', health: 'FAILURE', action: 'RESET_GPU', source: 'NVIDIA dynamic page retirement: the lifetime count of the same errors (survives resets)' },
  { counter: 'retired_pages.pending', trigger: 'set', mnemonic: 'PAGE_RETIREMENT_PENDING', health: 'WARNING', action: 'RESET_GPU', source: 'NVIDIA dynamic page retirement: "reload the driver to activate" (as Xid 63)' },
  { counter: 'remapped_rows.pending', trigger: 'set', mnemonic: 'ROW_REMAP_PENDING', health: 'WARNING', action: 'RESET_GPU', source: 'NVIDIA row remapping: applied at the next GPU reset (as Xid 63)' },
  { counter: 'remapped_rows.failure', trigger: 'set', mnemonic: 'ROW_REMAP_FAILURE', health: 'FAILURE', action: 'RESET_GPU', source: 'NVIDIA row remapping: a row could not be remapped (as Xid 64); DCGM_FI_DEV_ROW_REMAP_FAILURE' },
  { counter: 'clocks_event_reasons.hw_thermal_slowdown', trigger: 'set', mnemonic: 'HW_THERMAL_SLOWDOWN', health: 'WARNING', action: 'CHECK_MECHANICALS', source: 'nvidia-smi clocks event reasons; DCGM_HEALTH_WATCH_THERMAL' },
  { counter: 'clocks_event_reasons.hw_power_brake_slowdown', trigger: 'set', mnemonic: 'HW_POWER_BRAKE_SLOWDOWN', health: 'WARNING', action: 'CHECK_MECHANICALS', source: 'nvidia-smi clocks event reasons; DCGM_HEALTH_WATCH_POWER' },
  { counter: 'gpu.missing', trigger: 'set', mnemonic: 'GPU_MISSING', health: 'FAILURE', action: 'RESTART_BM', source: 'the GPU is no longer listed by nvidia-smi (as Xid 79); the device plugin marks every device unhealthy when NVML fails' },
  { counter: 'gpu.fallen_off_bus', trigger: 'set', mnemonic: 'GPU_FALLEN_OFF_BUS', health: 'FAILURE', action: 'RESTART_BM', source: 'NVSentinel: a kernel line "fallen off the bus" without an Xid (gpufallen_handler.go)' },
  { counter: 'diagnostic.failed', trigger: 'set', mnemonic: 'DIAGNOSTIC_FAILED', health: 'FAILURE', action: 'CONTACT_SUPPORT', source: 'DCGM user guide: level 1 as a readiness check; a GPU that fails it (or gpufleet\'s driver check) stays out' },
  { counter: 'nvidia-smi.failed', trigger: 'set', mnemonic: 'NVIDIA_SMI_FAILED', health: 'WARNING', action: 'CONTACT_SUPPORT', source: 'nvidia-smi exited non-zero or hung past its timeout: the GPUs could not be read', why: 'a failed read is not a failed GPU; a GPU that stays unlisted becomes gpu.missing' },
];

const XIDS = new Map(XID_TABLE.map((r) => [r.xid, r]));
const COUNTERS = new Map(COUNTER_TABLE.map((r) => [r.counter, r]));

/** The row of an Xid; an Xid in no row is UNKNOWN_XID (WARNING). */
export function xidRule(xid: number): { mnemonic: string; health: GpuRuleHealth; action: string } {
  return XIDS.get(xid) ?? UNKNOWN_XID;
}

export function counterRule(counter: string): CounterRow | undefined {
  return COUNTERS.get(counter);
}
