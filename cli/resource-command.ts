// One resource group's `list`, `get <id>`, `create`, `update <id>`, `delete <id>`, each with `--json`
// printing what the API answered (lists unwrapped), over a client/ ResourceApi. A group names its
// table columns and how its options become a request body; `--data '{…}'` sends any other field
// (the named options win over it). Validation stays the server's.
import { Command } from 'commander';
import { ApiClient, type ResourceApi } from '../client/index.ts';
import { jsonObjectArg, printFields, printJson, printRecord, printTable, withSpinner } from './output.ts';

type Options = Record<string, unknown> & { data?: Record<string, unknown>; json?: boolean };

export interface BodySpec {
  /** adds the options that become the body (besides --data and --json) */
  options(c: Command): Command;
  /** the body from the parsed options; `--data` goes under it */
  body(o: Options): Record<string, unknown>;
}

export interface ResourceGroup<View> {
  name: string;
  /** one resource, for messages: "template" */
  noun: string;
  description: string;
  api(client: ApiClient): ResourceApi<View, never, never>;
  /** the id `get`/`update`/`delete` take and the messages show (default `id`) */
  idOf?(v: View): string;
  idName?: string;
  /** the list's table: header and the cell of each row */
  columns: [string, (v: View) => unknown][];
  /** the `get` view for people (default: every field); `--json` prints the API's record */
  show?(v: View): [string, unknown][];
  create?: BodySpec;
  update?: BodySpec;
  /** `delete`'s description: what goes with it */
  deletes?: string;
}

const idOfView = (v: unknown): string => String((v as { id?: unknown }).id ?? '');

export function resourceCommand<View>(g: ResourceGroup<View>): Command {
  const api = () => g.api(new ApiClient()) as unknown as ResourceApi<View, Record<string, unknown>, Record<string, unknown>>;
  const idOf = g.idOf ?? idOfView;
  const idName = g.idName ?? 'id';
  const group = new Command(g.name).description(g.description);
  group
    .command('list')
    .description(`list ${g.name}`)
    .option('--json', 'print JSON')
    .action(async (o: Options) => {
      const rows = await withSpinner(`listing ${g.name}`, o.json, () => api().list());
      if (o.json) return printJson(rows);
      printTable(
        g.columns.map(([head]) => head),
        rows.map((r) => g.columns.map(([, value]) => value(r))),
      );
    });
  group
    .command('get')
    .description(`show a ${g.noun}`)
    .argument(`<${idName}>`, `${g.noun} ${idName}`)
    .option('--json', 'print JSON')
    .action(async (id: string, o: Options) => {
      const v = await withSpinner(`reading ${id}`, o.json, () => api().get(id));
      if (o.json) printJson(v);
      else if (g.show) printFields(g.show(v));
      else printRecord(v as Record<string, unknown>);
    });
  if (g.create) {
    const spec = g.create;
    bodyCommand(group.command('create').description(`create a ${g.noun}`), spec).action(async (o: Options) => {
      const v = await withSpinner(`creating a ${g.noun}`, o.json, () => api().create({ ...o.data, ...spec.body(o) }));
      if (o.json) printJson(v);
      else console.log(`${g.noun} ${idOf(v)} created`);
    });
  }
  if (g.update) {
    const spec = g.update;
    bodyCommand(group.command('update').description(`change a ${g.noun} (only the fields given)`).argument(`<${idName}>`, `${g.noun} ${idName}`), spec).action(
      async (id: string, o: Options) => {
        const v = await withSpinner(`updating ${id}`, o.json, () => api().update(id, { ...o.data, ...spec.body(o) }));
        if (o.json) printJson(v);
        else console.log(`${g.noun} ${idOf(v)} updated`);
      },
    );
  }
  group
    .command('delete')
    .description(`delete a ${g.noun}${g.deletes ? `: ${g.deletes}` : ''}`)
    .argument(`<${idName}>`, `${g.noun} ${idName}`)
    .option('--json', 'print JSON')
    .action(async (id: string, o: Options) => {
      await withSpinner(`deleting ${id}`, o.json, () => api().delete(id));
      if (o.json) printJson({ [idName]: id, deleted: true });
      else console.log(`${id} deleted`);
    });
  return group;
}

function bodyCommand(c: Command, spec: BodySpec): Command {
  return spec.options(c).option('--data <json>', 'other fields of the body, as a JSON object', jsonObjectArg).option('--json', 'print JSON');
}

/** drops the entries whose value is undefined: a body of the options given */
export function defined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}
