// A pod's ports on its page (docs/console.md, "A pod"): an HTTP port is a link to its URL on the
// proxy domain; a click trades the key's session for a signed link (POST /v2/pods/{id}/ports/{port}/link,
// docs/connect.md) and opens it in a new tab, since a browser cannot send a key to the port's host.
// A TCP or UDP port is text: its host address and public port (`ip:public`), to connect to directly.
import { useState } from 'preact/hooks';
import type { PodView } from '../../../client/index.ts';
import { useApi } from '../api.ts';
import { ErrorAlert } from '../ui/widgets.tsx';

interface Port {
  private: number;
  public: number | null;
  type: string;
  ip: string | null;
  url: string | null;
}

export function PodPorts({ pod }: { pod: PodView }) {
  const api = useApi();
  const [error, setError] = useState<unknown>(undefined);
  const runtime = pod.runtime as { ports?: Port[] } | null;
  const ports = runtime?.ports ?? [];
  if (!ports.length) return <p class="muted">Ports: {Array.isArray(pod.ports) && pod.ports.length ? `${(pod.ports as string[]).join(', ')} (not open yet)` : 'none'}</p>;

  /** opens a new tab now (while the click still allows it), then sends it to a fresh signed link */
  const open = (e: MouseEvent, port: number) => {
    e.preventDefault();
    setError(undefined);
    const tab = window.open('about:blank', '_blank');
    if (tab) tab.opener = null;
    api.pods.portLink(pod.id, port).then(
      ({ url }) => {
        if (tab) tab.location.href = url;
        else location.href = url;
      },
      (err: unknown) => {
        tab?.close();
        setError(err);
      },
    );
  };

  return (
    <>
      <ul class="ports" aria-label="Ports">
        {ports.map((p) => (
          <li>
            {p.url ? (
              api.write ? (
                <a href={p.url} target="_blank" rel="noopener noreferrer" onClick={(e) => open(e, p.private)}>
                  {p.private}/{p.type}: {p.url}
                </a>
              ) : (
                <span>
                  {p.private}/{p.type}: <span class="mono">{p.url}</span> (opening it in a browser needs a key that may write)
                </span>
              )
            ) : (
              <span>
                {p.private}/{p.type}
                {p.ip && p.public ? (
                  <>
                    {': '}
                    <span class="mono">
                      {p.ip}:{p.public}
                    </span>
                  </>
                ) : (
                  ' (no public address)'
                )}
              </span>
            )}
          </li>
        ))}
      </ul>
      <ErrorAlert error={error} />
    </>
  );
}
