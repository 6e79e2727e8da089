// Small shared pieces: the error alert, the confirmation dialog behind an action button, status
// words, tabs, and a labelled field that shows the API's validation message for it.
import type { ComponentChildren } from 'preact';

/** what a Field gives its control: its id, and the ARIA that ties it to its hint and message */
export interface FieldAttrs {
  id: string;
  'aria-invalid'?: boolean | undefined;
  'aria-describedby'?: string | undefined;
}
import { useEffect, useId, useRef } from 'preact/hooks';
import { ApiError } from '../../../client/index.ts';

export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return `${e.message} (${e.code})`;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** a visible, announced error (role=alert) */
export function ErrorAlert({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="alert" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return <p aria-live="polite" class="muted">Loading {what}…</p>;
}

/** the API's status word as text, coloured by kind */
export function Status({ word }: { word: string }) {
  const kind = /RUNNING|COMPLETED|READY|IDLE|HEALTHY|OK|ACTIVE/.test(word) ? 'good' : /ERROR|FAILED|UNHEALTHY|LOST|TIMED_OUT/.test(word) ? 'bad' : 'neutral';
  return <span class={`status status-${kind}`}>{word}</span>;
}

export interface Tab {
  id: string;
  label: string;
}

/** an ARIA tab list: arrow keys move between tabs */
export function Tabs({ tabs, current, onChange }: { tabs: Tab[]; current: string; onChange: (id: string) => void }) {
  const onKey = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === current);
    const next = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : null;
    if (next === null) return;
    const t = tabs[(next + tabs.length) % tabs.length]!;
    onChange(t.id);
    (document.getElementById(`tab-${t.id}`) as HTMLElement | null)?.focus();
  };
  return (
    <div role="tablist" class="tabs" onKeyDown={onKey}>
      {tabs.map((t) => (
        <button
          type="button"
          role="tab"
          id={`tab-${t.id}`}
          aria-selected={t.id === current}
          aria-controls={`panel-${t.id}`}
          tabIndex={t.id === current ? 0 : -1}
          onClick={() => onChange(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function TabPanel({ id, children }: { id: string; children: ComponentChildren }) {
  return (
    <div role="tabpanel" id={`panel-${id}`} aria-labelledby={`tab-${id}`} tabIndex={0}>
      {children}
    </div>
  );
}

/** `$.image: must match …` → { image: 'must match …' }: the API's validation messages by field */
export function fieldErrors(e: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(e instanceof ApiError)) return out;
  for (const line of e.errors) {
    const m = /^\$\.?([A-Za-z0-9_]+)?[^:]*:\s*(.*)$/.exec(line) ?? /^\/?([A-Za-z0-9_]+)[^ ]* (.*)$/.exec(line);
    const field = m?.[1] ?? '';
    out[field] = out[field] ? `${out[field]}; ${m?.[2] ?? line}` : (m?.[2] ?? line);
  }
  return out;
}

/** a labelled input with its hint and the API's message for it (aria-invalid, aria-describedby) */
export function Field(props: { label: string; error?: string | undefined; hint?: string; children: (attrs: FieldAttrs) => ComponentChildren }) {
  const id = useId();
  const errId = `${id}-error`;
  const hintId = `${id}-hint`;
  const described = [props.hint ? hintId : '', props.error ? errId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children({ id, 'aria-invalid': props.error ? true : undefined, 'aria-describedby': described })}
      {props.hint ? (
        <small id={hintId} class="muted">
          {props.hint}
        </small>
      ) : null}
      {props.error ? (
        <small id={errId} class="field-error">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}

/** focuses the page's heading on navigation, so a screen reader hears where it is */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

export const usd = (n: unknown, digits = 4): string => (typeof n === 'number' ? `$${n.toFixed(digits)}` : '—');
export const when = (iso: unknown): string => (typeof iso === 'string' ? new Date(iso).toLocaleString() : '—');

/** the API's validation messages for no field the form shows (a form-wide one has no field), listed above the form */
export function OtherFieldErrors({ errors, shown }: { errors: Record<string, string>; shown: readonly string[] }) {
  const other = Object.entries(errors).filter(([k]) => !shown.includes(k));
  if (!other.length) return null;
  return (
    <ul class="field-error">
      {other.map(([k, v]) => (
        <li>{k ? `${k}: ${v}` : v}</li>
      ))}
    </ul>
  );
}
