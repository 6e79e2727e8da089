// One section of resources the account owns (templates, network volumes, registry credentials): a
// table, a form to create one and to edit one (only the fields the API lets change, only those
// changed are sent), and Delete behind the confirmation dialog. The API's own validation messages
// (`$.image: …`) are shown at the field they name, the others above the form. A key that may not
// write sees the table only (the server refuses anyway).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { ResourceView } from '../../../client/index.ts';
import { useConfirm } from './confirm.tsx';
import { envOf, envText, listOf } from './form-values.ts';
import { useLoad, useSubmit } from './hooks.ts';
import { ErrorAlert, Field, fieldErrors, Loading, OtherFieldErrors } from './widgets.tsx';

export interface FieldSpec {
  /** the API's field: its validation messages name it (`$.image: …`) */
  name: string;
  label: string;
  kind: 'text' | 'password' | 'number' | 'list' | 'env' | 'checkbox' | 'select';
  hint?: string;
  /** the API takes it at creation only */
  createOnly?: boolean;
  /** select: the choices, '' first when it may be left empty */
  options?: { value: string; label: string }[];
  mono?: boolean;
}

export interface Column {
  label: string;
  cell: (r: ResourceView) => ComponentChildren;
}

export interface ResourceManagerProps {
  title: string;
  /** "template": the forms' and buttons' names */
  singular: string;
  load: () => Promise<ResourceView[]>;
  create: (body: Record<string, unknown>) => Promise<unknown>;
  /** absent: the API changes nothing after creation */
  update?: (id: string, body: Record<string, unknown>) => Promise<unknown>;
  remove: (id: string) => Promise<unknown>;
  fields: FieldSpec[];
  columns: Column[];
  /** said in the delete dialog, under the question */
  deleteDetail: string;
  /** the key may change things */
  write: boolean;
  /** what the section says with nothing in it */
  empty: string;
}

type Values = Record<string, string | boolean>;

/** a resource's field as the form holds it (a password is never shown: empty keeps it) */
function formValue(spec: FieldSpec, r: ResourceView | null): string | boolean {
  const v = r?.[spec.name];
  if (spec.kind === 'checkbox') return v === true;
  if (spec.kind === 'password') return '';
  if (spec.kind === 'list') return Array.isArray(v) ? v.join(' ') : '';
  if (spec.kind === 'env') return envText(v);
  return v === undefined || v === null ? '' : String(v);
}

/** the form's text as the API's value; an empty field is `undefined` (not sent), or on an edit what clears it */
function apiValue(spec: FieldSpec, v: string | boolean, editing: boolean): unknown {
  if (spec.kind === 'checkbox') return v === true;
  const text = String(v);
  if (spec.kind === 'list') return listOf(text).length || editing ? listOf(text) : undefined;
  if (spec.kind === 'env') return Object.keys(envOf(text)).length || editing ? envOf(text) : undefined;
  if (text.trim() === '') return editing && spec.kind === 'select' ? null : editing && spec.kind === 'text' ? '' : undefined;
  // a number the API checks: text that is none goes as it is, so its message names the field
  if (spec.kind === 'number') return /^-?\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text;
  return spec.kind === 'password' ? text : text.trim();
}

/** create: every filled field; edit: the fields changed from the resource as loaded */
function bodyOf(fields: FieldSpec[], values: Values, initial: Values, editing: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    if (editing && (f.createOnly || values[f.name] === initial[f.name])) continue;
    if (!editing && f.kind === 'checkbox' && values[f.name] !== true) continue;
    const v = apiValue(f, values[f.name] ?? '', editing);
    if (v !== undefined) body[f.name] = v;
  }
  return body;
}

const nameOf = (r: ResourceView) => String(r.name ?? r.id);

function ResourceForm(props: ResourceManagerProps & { editing: ResourceView | null; done: () => void }) {
  const { editing, fields: all, singular } = props;
  const fields = editing ? all.filter((f) => !f.createOnly) : all;
  const [initial] = useState<Values>(() => Object.fromEntries(all.map((f) => [f.name, formValue(f, editing)])));
  const [values, setValues] = useState<Values>(initial);
  const { submit, busy, error } = useSubmit(async () => {
    const body = bodyOf(all, values, initial, editing !== null);
    if (editing) await props.update!(editing.id, body);
    else await props.create(body);
    props.done();
  });
  const errs = fieldErrors(error);
  const set = (name: string) => (e: Event) => {
    const t = e.currentTarget as HTMLInputElement;
    setValues({ ...values, [name]: t.type === 'checkbox' ? t.checked : t.value });
  };
  const label = editing ? `Edit ${singular} ${nameOf(editing)}` : `New ${singular}`;
  return (
    <form class="card form" aria-label={label} onSubmit={submit} noValidate>
      <h3>{label}</h3>
      <ErrorAlert error={error} />
      <OtherFieldErrors errors={errs} shown={fields.map((f) => f.name)} />
      {fields.map((f) =>
        f.kind === 'checkbox' ? (
          <label class="check">
            <input type="checkbox" checked={values[f.name] === true} onChange={set(f.name)} /> {f.label}
          </label>
        ) : (
          <Field label={f.label} error={errs[f.name]} {...(f.hint ? { hint: f.hint } : {})}>
            {(a) =>
              f.kind === 'select' ? (
                <select {...(a as object)} value={String(values[f.name])} onChange={set(f.name)}>
                  {(f.options ?? []).map((o) => (
                    <option value={o.value}>{o.label}</option>
                  ))}
                </select>
              ) : f.kind === 'env' ? (
                <textarea {...(a as object)} class="mono" rows={3} value={String(values[f.name])} onInput={set(f.name)} spellcheck={false} />
              ) : (
                <input
                  {...(a as object)}
                  type={(f.kind === 'password' ? 'password' : f.kind === 'number' ? 'number' : 'text') as 'text'}
                  class={f.mono ? 'mono' : undefined}
                  value={String(values[f.name])}
                  onInput={set(f.name)}
                  autocomplete={f.kind === 'password' ? 'new-password' : 'off'}
                  spellcheck={false}
                />
              )
            }
          </Field>
        ),
      )}
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {editing ? `Save ${singular}` : `Create ${singular}`}
        </button>
        <button type="button" onClick={props.done}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ResourceManager(props: ResourceManagerProps) {
  const { title, singular } = props;
  const confirm = useConfirm();
  const list = useLoad(props.load, []);
  const [editing, setEditing] = useState<ResourceView | 'new' | null>(null);
  const id = `h-${title.toLowerCase().replace(/\W+/g, '-')}`;
  const done = () => {
    setEditing(null);
    list.reload();
  };
  return (
    <section aria-labelledby={id}>
      <div class="page-head">
        <h2 id={id}>{title}</h2>
        {props.write && editing === null ? (
          <button type="button" class="primary small" onClick={() => setEditing('new')}>
            New {singular}
          </button>
        ) : null}
      </div>
      {editing !== null ? <ResourceForm key={editing === 'new' ? 'new' : editing.id} {...props} editing={editing === 'new' ? null : editing} done={done} /> : null}
      <ErrorAlert error={list.error} />
      {!list.data ? (
        <Loading what={title.toLowerCase()} />
      ) : list.data.length === 0 ? (
        <p>{props.empty}</p>
      ) : (
        <table class="list" aria-label={title}>
          <thead>
            <tr>
              {props.columns.map((c) => (
                <th scope="col">{c.label}</th>
              ))}
              {props.write ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {list.data.map((r) => (
              <tr key={r.id}>
                {props.columns.map((c) => (
                  <td>{c.cell(r)}</td>
                ))}
                {props.write ? (
                  <td>
                    <span class="actions">
                      {props.update ? (
                        <button type="button" class="small" aria-label={`Edit ${nameOf(r)}`} onClick={() => setEditing(r)}>
                          Edit
                        </button>
                      ) : null}
                      <button
                        type="button"
                        class="small danger"
                        aria-label={`Delete ${nameOf(r)}`}
                        onClick={() =>
                          confirm({
                            label: 'Delete',
                            question: `Delete the ${singular} ${nameOf(r)}?`,
                            detail: props.deleteDetail,
                            danger: true,
                            run: async () => {
                              await props.remove(r.id);
                              if (editing !== null && editing !== 'new' && editing.id === r.id) setEditing(null);
                              list.reload();
                            },
                          })
                        }
                      >
                        Delete
                      </button>
                    </span>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
