// One confirmation dialog for the whole console: an action button (named Start, Stop, Restart,
// Terminate…) calls confirm(); the action runs only after "Yes, <action>". One modal <dialog> serves
// every button, so a list of a thousand pods does not carry a thousand dialogs.
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useRef, useState } from 'preact/hooks';
import { ErrorAlert } from './widgets.tsx';

export interface ConfirmRequest {
  /** the action's name, e.g. "Terminate" */
  label: string;
  /** e.g. "Terminate pod web-1?" */
  question: string;
  /** what follows, said under the question */
  detail?: string;
  danger?: boolean;
  run: () => Promise<unknown>;
}

const ConfirmContext = createContext<(r: ConfirmRequest) => void>(() => undefined);

export const useConfirm = () => useContext(ConfirmContext);

export function ConfirmProvider({ children }: { children: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [req, setReq] = useState<ConfirmRequest | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const ask = useCallback((r: ConfirmRequest) => {
    setReq(r);
    setError(undefined);
    dialog.current?.showModal();
  }, []);
  const yes = async () => {
    if (!req) return;
    setBusy(true);
    try {
      await req.run();
      dialog.current?.close();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmContext.Provider value={ask}>
      {children}
      <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-detail" onClose={() => setReq(null)}>
        <h2 id="confirm-title">{req?.question ?? ''}</h2>
        <p id="confirm-detail" class="muted">
          {req?.detail ?? ''}
        </p>
        <ErrorAlert error={error} />
        <div class="row">
          <button type="button" class={req?.danger ? 'danger' : 'primary'} disabled={busy} onClick={yes}>
            Yes, {req?.label.toLowerCase() ?? ''}
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </ConfirmContext.Provider>
  );
}
