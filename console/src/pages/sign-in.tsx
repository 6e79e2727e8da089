// Sign-in: one field labelled "API key" and a "Sign in" button (Enter submits). The key goes to the
// session exchange only, and the field is emptied whatever the answer.
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../../../client/index.ts';
import { signIn, type Session } from '../session.ts';

export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const field = input.current!;
    const key = field.value.trim();
    field.value = '';
    if (!key) {
      setError('Enter an API key.');
      field.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(key));
    } catch (err) {
      setError(
        err instanceof ApiError && (err.status === 401 || err.status === 403)
          ? `That API key was not accepted: ${err.message.replace(/^Sign-in refused:\s*/, '')}`
          : `Could not sign in: ${err instanceof Error ? err.message : String(err)}`,
      );
      field.focus();
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="signin card" onSubmit={submit} autocomplete="off">
      <h1>Sign in to gpufleet</h1>
      <p class="muted">Your key is exchanged for a session and is not kept by this browser.</p>
      <label for="api-key">API key</label>
      <input id="api-key" ref={input} type="password" name="api-key" autocomplete="off" spellcheck={false} required aria-describedby={error ? 'signin-error' : undefined} />
      {error ? (
        <p id="signin-error" class="alert" role="alert">
          {error}
        </p>
      ) : null}
      <button type="submit" class="primary" disabled={busy}>
        Sign in
      </button>
    </form>
  );
}
