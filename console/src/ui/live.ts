// Live views: follow GET /v2/events (server-sent events) from now on and call back for each event;
// the stream is reopened after a drop, from the last event seen.
import { useEffect, useRef } from 'preact/hooks';
import type { EventView } from '../../../model/index.ts';
import { useApi } from '../api.ts';

export function useEvents(onEvent: (e: EventView) => void, query: { resourceId?: string } = {}): void {
  const api = useApi();
  const saved = useRef(onEvent);
  saved.current = onEvent;
  useEffect(() => {
    const ac = new AbortController();
    let since = new Date(Date.now() - 1000).toISOString();
    void (async () => {
      while (!ac.signal.aborted) {
        try {
          for await (const e of api.events.follow({ ...query, since }, ac.signal)) {
            since = e.time;
            saved.current(e);
          }
        } catch {
          // dropped: wait a little and follow again from the last event's time
        }
        if (!ac.signal.aborted) await new Promise((r) => setTimeout(r, 2000));
      }
    })();
    return () => ac.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, query.resourceId]);
}
