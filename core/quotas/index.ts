// core/quotas: per-account limits, their admission at the transaction that places new work, and the
// view of limits beside use (docs/teams.md).
export { Admission, hasLimits, type Demand } from './admission.ts';
export { AccountLimitsService, type AccountLimitsView, type LimitLine } from './limits-service.ts';
export { monthOf, monthStart, quotaUsage, type QuotaUsage } from './quota-usage.ts';
export { SpendGuard, type SpendActions, type SpendGuardOptions } from './spend-guard.ts';
