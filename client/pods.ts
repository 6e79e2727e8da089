// Typed calls for pods (`/v2/pods`, runpod-compat.md "REST v2 … Pods"): create, list, get, update,
// the start/stop/restart/terminate actions, exec, and the log as server-sent events. Used by
// `gpufleet pods`.
import type { PodCreateInput, PodUpdateInput } from '../model/index.ts';
import type { ApiClient } from './api-client.ts';
import { queryString, ResourceApi } from './resource-api.ts';
import { PodExecSocket, type ExecSessionHandlers, type ExecSessionOptions } from './pod-exec-socket.ts';

/** the fields of a pod view the CLI reads; the API answers more (model/schemas/pod-view.ts) */
export interface PodView {
  id: string;
  name: string;
  status: string;
  image?: string;
  gpu?: { id: string; count: number } | null;
  cpu?: unknown;
  cloud?: string;
  dataCenterId?: string | null;
  [field: string]: unknown;
}

export type PodAction = 'start' | 'stop' | 'restart' | 'terminate';

/** one event of `GET /v2/pods/{id}/logs` (docs/pods.md, "Logs") */
export interface PodLogEvent {
  event: string;
  id?: string;
  data: string;
}

/** `GET /v2/pods/{id}/logs` and a worker's: `follow: false` sends what is there, then the end */
export interface LogQuery {
  /** lines before the live ones (default 100, at most 5000) */
  tail?: number;
  /** RFC 3339: from then on */
  since?: string;
  source?: 'container' | 'system';
  /** default true: keep following until the container stops */
  follow?: boolean;
}

/** `/v2/pods`: list, get, create, update (PATCH), terminate (delete), the actions, exec and logs */
export class PodsApi extends ResourceApi<PodView, PodCreateInput | Record<string, unknown>, PodUpdateInput | Record<string, unknown>> {
  constructor(client: ApiClient) {
    super(client, '/v2/pods', 'pods');
  }

  /** the pod after the action; undefined once terminated (the API answers 204) */
  act(id: string, action: PodAction): Promise<PodView | undefined> {
    return this.client.post<PodView | undefined>(this.one(id, '/action'), { action });
  }

  /** runs `argv` in the pod's container: `output` events `{stream, text}`, then `exit` `{code}` (or `problem`) */
  exec(id: string, argv: string[], signal?: AbortSignal): AsyncGenerator<PodLogEvent> {
    return this.client.sse(this.one(id, '/exec'), signal, { command: argv });
  }

  /** an interactive session (GET /v2/pods/{id}/exec/ws): stdin, a terminal if asked, the exit code */
  execSession(id: string, argv: readonly string[], opts: ExecSessionOptions, out: ExecSessionHandlers): Promise<PodExecSocket> {
    return PodExecSocket.open(this.client, id, argv, opts, out);
  }

  /**
   * a signed link that opens the pod's HTTP `port` in a browser (POST /v2/pods/{id}/ports/{port}/link,
   * docs/connect.md): good for 60 s, traded by the port's host for a cookie of that port only
   */
  portLink(id: string, port: number, path?: string): Promise<{ url: string; expiresAt: string }> {
    return this.client.post<{ url: string; expiresAt: string }>(this.one(id, `/ports/${port}/link`), path === undefined ? {} : { path });
  }

  /** the pod's log: follows until it ends or `signal` aborts, or with `follow: false` what is there now */
  logs(id: string, query: LogQuery = {}, signal?: AbortSignal): AsyncGenerator<PodLogEvent> {
    return this.client.sse(this.one(id, `/logs${queryString({ ...query })}`), signal);
  }
}
