// Typed calls for pods (`/v2/pods`, runpod-compat.md "REST v2 … Pods"): create, list, get, the
// start/stop/restart/terminate actions, and the log as server-sent events. Used by `gpufleet pods`.
import type { ApiClient } from './api-client.ts';
import type { Duplex } from 'node:stream';
import { PodExecSocket, type ExecSessionHandlers, type ExecSessionOptions } from './pod-exec-socket.ts';
import { openSshTunnel } from './pod-ssh-tunnel.ts';

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

export class PodsApi {
  constructor(private readonly client: ApiClient) {}

  create(input: Record<string, unknown>): Promise<PodView> {
    return this.client.post<PodView>('/v2/pods', input);
  }

  async list(): Promise<PodView[]> {
    return (await this.client.get<{ pods: PodView[] }>('/v2/pods')).pods;
  }

  get(id: string): Promise<PodView> {
    return this.client.get<PodView>(`/v2/pods/${encodeURIComponent(id)}`);
  }

  /** the pod after the action; undefined once terminated (the API answers 204) */
  act(id: string, action: PodAction): Promise<PodView | undefined> {
    return this.client.post<PodView | undefined>(`/v2/pods/${encodeURIComponent(id)}/action`, { action });
  }

  /** runs `argv` in the pod's container: `output` events `{stream, text}`, then `exit` `{code}` (or `problem`) */
  exec(id: string, argv: string[], signal?: AbortSignal): AsyncGenerator<PodLogEvent> {
    return this.client.sse(`/v2/pods/${encodeURIComponent(id)}/exec`, signal, { command: argv });
  }

  /** an interactive session (GET /v2/pods/{id}/exec/ws): stdin, a terminal if asked, the exit code */
  execSession(id: string, argv: readonly string[], opts: ExecSessionOptions, out: ExecSessionHandlers): Promise<PodExecSocket> {
    return PodExecSocket.open(this.client, id, argv, opts, out);
  }

  /**
   * A byte stream to the pod's port 22 through the control plane (GET /v2/pods/{id}/ssh/tunnel,
   * docs/connect.md): what `gpufleet pods ssh --proxy` bridges to ssh. A refusal rejects with its ApiError.
   */
  sshTunnel(id: string): Promise<Duplex> {
    return openSshTunnel(this.client, id);
  }

  /** follows the pod's log until it ends or `signal` aborts */
  logs(id: string, query: { tail?: number; source?: string } = {}, signal?: AbortSignal): AsyncGenerator<PodLogEvent> {
    const q = new URLSearchParams();
    if (query.tail !== undefined) q.set('tail', String(query.tail));
    if (query.source) q.set('source', query.source);
    const qs = q.size ? `?${q.toString()}` : '';
    return this.client.sse(`/v2/pods/${encodeURIComponent(id)}/logs${qs}`, signal);
  }
}
