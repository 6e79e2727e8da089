// `gpufleet plan | apply | destroy | import | force-unlock`: the declarative workflow over a cdktf app
// (a folder with cdktf.json, --app, default the cwd) or one synthesized cdk.tf.json (--tf-json, what
// the Terraform provisioners pass). Exit codes: 0 done, 1 error (a prompt answered other than "yes",
// or not at all), 2 (plan --detailed-exitcode) changes, 130/143 interrupted (the stack lock released).
import path from 'node:path';
import { Command, Option } from 'commander';
import { ApiClient, ApiError } from '../client/index.ts';
import type { DesiredStack, Reporter, RunOptions } from '../provider/index.ts';
import { watchInterrupts } from './interrupt.ts';
import { askYes } from './prompt.ts';

/** provider/ (cdktf, constructs, the engine) is loaded when a stack command runs, not for every `gpufleet` */
type Provider = typeof import('../provider/index.ts');
const loadProvider = (): Promise<Provider> => import('../provider/index.ts');

/** What the commands touch outside themselves; tests pass their own. */
export interface StackCliIo {
  out(text: string): void;
  err(text: string): void;
  reporter(p: Provider): Reporter;
  confirm?(question: string): Promise<boolean>;
  api(p: Provider): ApiClient;
  setExitCode(code: number): void;
  /** ends the process now (after an interrupt: a prompt or requests may still be pending) */
  exit(code: number): never;
}

export function processIo(): StackCliIo {
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    reporter: (p) => p.terminalReporter(),
    confirm: (question) => askYes(question),
    api: (p) => {
      try {
        return new p.RetryingApiClient();
      } catch (e) {
        throw new UsageError((e as Error).message); // no GPUFLEET_API_KEY
      }
    },
    setExitCode: (code) => void (process.exitCode = code),
    exit: (code) => process.exit(code),
  };
}

/** Wrong use of the command (a missing key, --watch without --auto-approve): a message, not a stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface SourceOpts {
  app?: string;
  tfJson?: string;
  stack?: string;
}

function withSource(cmd: Command): Command {
  return cmd
    .option('--app <dir>', 'folder with cdktf.json whose "app" command synthesizes the stacks', '.')
    .option('--tf-json <file>', 'read one synthesized cdk.tf.json instead of running the app')
    .option('--stack <name>', 'only this stack of the app');
}

async function loadStacks(p: Provider, o: SourceOpts): Promise<DesiredStack[]> {
  const all = o.tfJson ? [await p.readTfJson(path.resolve(o.tfJson))] : await p.synthApp(path.resolve(o.app ?? '.'));
  const stacks = o.stack ? all.filter((s) => s.name === o.stack) : all;
  if (!stacks.length)
    throw new p.SynthError(o.stack ? `No stack "${o.stack}"; the app has ${all.map((s) => s.name).join(', ') || 'none'}.` : 'The app synthesized no stacks.');
  return stacks;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** Known failures print as `error: …` with exit code 1; anything else is a bug and keeps its stack. */
function action<A extends unknown[]>(io: StackCliIo, fn: (p: Provider, ...args: A) => Promise<number>): (...args: A) => Promise<void> {
  return async (...args) => {
    const p = await loadProvider();
    try {
      io.setExitCode(await fn(p, ...args));
    } catch (e) {
      const known = [p.SynthError, p.PlanError, p.RefusedError, p.StackLockedError, p.ImportError, ApiError, UsageError].some((k) => e instanceof k);
      if (!known) throw e;
      const err = e as Error;
      io.err(`error: ${err.message}${e instanceof ApiError ? ` (HTTP ${e.status} ${e.code})` : ''}\n`);
      io.setExitCode(1);
    }
  };
}

interface ApplyFlags extends SourceOpts {
  autoApprove?: boolean;
  allowDataLoss?: boolean;
  wait: boolean;
  waitTimeout: string;
  resource?: string[];
  lock: boolean;
  watch?: boolean;
  interval: string;
  tfReplacedHash?: string;
}

function runOptions(p: Provider, io: StackCliIo, f: ApplyFlags, signal?: AbortSignal): RunOptions {
  return {
    ...(signal ? { signal } : {}),
    api: io.api(p),
    reporter: io.reporter(p),
    out: io.out,
    ...(io.confirm ? { confirm: io.confirm } : {}),
    autoApprove: Boolean(f.autoApprove),
    allowDataLoss: Boolean(f.allowDataLoss),
    wait: f.wait,
    waitTimeoutMs: Number(f.waitTimeout) * 1000,
    lock: f.lock,
    ...(f.resource?.length ? { only: f.resource } : {}),
  };
}

function changeOptions(cmd: Command): Command {
  return withSource(cmd)
    .option('--auto-approve', 'skip the confirmation prompt')
    .option('--allow-data-loss', 'with --auto-approve: allow deleting or replacing network volumes and pods with persistent mounts')
    .option('--resource <path>', 'only this construct path (repeatable)', collect)
    .option('--no-lock', 'do not take the stack lock (Terraform provisioners run under Terraform\'s lock)')
    .option('--no-wait', 'do not wait for pods to be RUNNING')
    .option('--wait-timeout <seconds>', 'how long to wait for pods to be RUNNING', '600');
}

export function stackCommands(io: StackCliIo = processIo()): Command[] {
  const plan = withSource(new Command('plan'))
    .description('show what apply would change (live state read through the API)')
    .option('--json', 'print the plan as JSON')
    .option('--destroy', 'plan the deletion of everything the stack owns')
    .option('--detailed-exitcode', 'exit 0 when nothing changes, 2 when something would, 1 on error')
    .action(
      action(io, async (p, f: SourceOpts & { json?: boolean; destroy?: boolean; detailedExitcode?: boolean }) => {
        let changed = false;
        const plans = [];
        for (const stack of await loadStacks(p, f)) {
          const plan = await p.makePlan(stack, io.api(p), { destroy: Boolean(f.destroy) });
          changed ||= p.hasChanges(plan);
          if (f.json) plans.push(p.planJson(plan));
          else io.out(p.formatPlan(plan));
        }
        if (f.json) io.out(JSON.stringify(plans.length === 1 ? plans[0] : plans, null, 2) + '\n');
        return f.detailedExitcode && changed ? 2 : 0;
      }),
    );

  const apply = changeOptions(new Command('apply'))
    .description('create, update and delete resources until the fleet matches the stacks')
    .option('--watch', 'keep reconciling (needs --auto-approve)')
    .addOption(new Option('--interval <seconds>', 'seconds between reconcile passes with --watch').default('30'))
    .action(
      action(io, async (p, f: ApplyFlags) => {
        if (f.watch) return watch(p, io, await loadStacks(p, f), f);
        return untilInterrupted(io, async (signal) => {
          let ok = true;
          for (const stack of await loadStacks(p, f)) {
            const r = await p.runApply(stack, runOptions(p, io, f, signal));
            ok &&= r.applied?.ok ?? true;
          }
          return ok ? 0 : 1;
        });
      }),
    );

  const destroy = changeOptions(new Command('destroy'))
    .description('delete every resource the stacks own (only those tagged with their stack)')
    .option('--tf-replaced-hash <hash>', 'Terraform provisioners: skip when the declared spec no longer has this hash (an update)')
    .action(
      action(io, async (p, f: ApplyFlags) =>
        untilInterrupted(io, async (signal) => {
          let ok = true;
          for (const stack of await loadStacks(p, f)) {
            if (f.tfReplacedHash && f.resource?.length) {
              const declared = stack.resources.find((r) => r.path === f.resource![0]);
              if (declared && declared.hash !== f.tfReplacedHash) {
                io.out(`${declared.path}: spec changed; Terraform is replacing its null_resource for an update, so the resource is kept for the create step.\n`);
                continue;
              }
            }
            const r = await p.runDestroy(stack, runOptions(p, io, f, signal));
            ok &&= r.applied?.ok ?? true;
          }
          return ok ? 0 : 1;
        }),
      ),
    );

  const importCmd = withSource(new Command('import'))
    .description('adopt an existing pod, network volume, template or endpoint into a stack (tags it)')
    .argument('<path>', 'construct path, e.g. trainer or example/trainer')
    .argument('<id>', 'id of the existing resource')
    .action(
      action(io, async (p, at: string, id: string, f: SourceOpts) => {
        const stacks = await loadStacks(p, f);
        const stack = stacks.length === 1 ? stacks[0]! : stacks.find((s) => at.startsWith(`${s.name}/`));
        if (!stack) throw new p.ImportError(`Name the stack: --stack, or a path starting with one of ${stacks.map((s) => s.name).join(', ')}.`);
        const api = io.api(p);
        const r = await p.withStackLock(api, stack.name, 'import', () => p.importResource(api, stack, at, id));
        io.out(`Imported ${r.kind} "${r.name}" [id=${r.id}] as ${stack.name}/${r.path}. Run \`gpufleet plan\` to see how it differs from the construct.\n`);
        return 0;
      }),
    );

  const unlock = new Command('force-unlock')
    .description('break a stack lock left by an apply that died')
    .argument('<stack>')
    .action(
      action(io, async (p, stack: string) => {
        await p.forceUnlock(io.api(p), stack);
        io.out(`Stack "${stack}" unlocked.\n`);
        return 0;
      }),
    );

  return [plan, apply, destroy, importCmd, unlock];
}

/**
 * Runs an apply or destroy with SIGINT/SIGTERM turned into an abort: the engine releases the stack lock
 * and throws, and the command exits 130/143 at once, whatever it was waiting on (the prompt included).
 */
async function untilInterrupted(io: StackCliIo, fn: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const interrupts = watchInterrupts();
  try {
    return await fn(interrupts.signal);
  } catch (e) {
    const code = interrupts.exitCode();
    if (code === null) throw e;
    // any failure after a signal is the signal's doing (InterruptedError, an app synth killed by the same Ctrl-C)
    io.err(`\nInterrupted: stopped before finishing; the stack lock is released. \`gpufleet plan\` shows where the stack stands.\n`);
    return io.exit(code);
  } finally {
    interrupts.dispose();
  }
}

async function watch(p: Provider, io: StackCliIo, stacks: DesiredStack[], f: ApplyFlags): Promise<number> {
  if (!f.autoApprove) throw new UsageError('--watch applies unattended: pass --auto-approve with it.');
  if (stacks.length !== 1) throw new UsageError('--watch reconciles one stack: name it with --stack.');
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await p.runWatch(stacks[0]!, { ...runOptions(p, io, f), intervalMs: Number(f.interval) * 1000, signal: controller.signal });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
}

