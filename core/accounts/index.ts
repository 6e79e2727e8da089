// core/accounts: API keys and how a request names who it acts as (Principal is model's).
export { ApiKeys, hasScope, keyRefusal, keyView, newId } from './api-keys.ts';
export { describeUser } from './resource-users.ts';
export { CONSOLE_SESSION_TTL_MS, ConsoleSessions, csrfTokenMatches, type ConsoleSession } from './console-sessions.ts';
