// Fair shares between accounts of what a replica holds open for them: a host's streams, and
// long-held requests (docs/security.md, "Stream shares").
export * from './host-stream-shares.ts';
export * from './held-requests.ts';
