// core/billing: money in one place: accrual of pods, workers and volumes, credits, credit holds.
export { type BillingKind, billingQueryFromParams, BillingService } from './billing-service.ts';
export { accrued, accrueNetworkVolume, accruePod, volumeRatePerHour } from './billing.ts';
export { costMicros, endHoldsOf, heldMicros, holdMicros, maxUnitsPerJob, spendable } from './credit-holds.ts';
export { AccountCredits } from './credits.ts';
