// core/observability: events (events/), Prometheus telemetry (telemetry/), and the in-memory slots
// behind the metrics-over-time routes (slot-history.ts, metrics-window.ts).
export { FileEventArchive } from './events/event-archive.ts';
export { EventLog } from './events/event-log.ts';
export { EVENT_LIST_MAX_LIMIT, type EventQuery, EventService } from './events/event-service.ts';
export { recordStatusEvents } from './events/status-events.ts';
export { scrapeGauge } from './telemetry/scrape-gauge.ts';
export { type ProvisionerObserver, Telemetry, UNMATCHED_ROUTE } from './telemetry/telemetry.ts';
export { DEFAULT_STEP_MS, DEFAULT_WINDOW_MS, MAX_BUCKETS, type MetricsWindow, parseMetricsWindow, windowView } from './metrics-window.ts';
export { foldSlots, HISTORY_RETENTION_MS, HISTORY_SLOT_MS, SlotHistory, slotOf } from './slot-history.ts';
