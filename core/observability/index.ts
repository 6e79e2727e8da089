// core/observability: events (events/) and Prometheus telemetry (telemetry/).
export { FileEventArchive } from './events/event-archive.ts';
export { EventLog } from './events/event-log.ts';
export { EVENT_LIST_MAX_LIMIT, type EventQuery, EventService } from './events/event-service.ts';
export { recordStatusEvents } from './events/status-events.ts';
export { scrapeGauge } from './telemetry/scrape-gauge.ts';
export { type ProvisionerObserver, Telemetry, UNMATCHED_ROUTE } from './telemetry/telemetry.ts';
