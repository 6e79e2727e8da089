// core/billing: money in one place: accrual of pods, workers and volumes, credits, credit holds.
export { type BillingKind, billingQueryFromParams, BillingService } from './billing-service.ts';
export { accrueNetworkVolume, accruePod } from './billing.ts';
export { costMicros, endHoldsOf, heldMicros, holdMicros, maxUnitsPerJob, spendable } from './credit-holds.ts';
export { AccountCredits } from './credits.ts';
