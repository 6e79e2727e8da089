// core/fair-share: shares of a host's streams and of held requests among accounts.
export { type HeldRequestKind, type HeldRequestLimits, HeldRequests, parseHeldRequestLimits } from './held-requests.ts';
export { HostStreamShares } from './host-stream-shares.ts';
