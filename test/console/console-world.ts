// The browser tests' world: a real control plane serving the console (built from console/) at
// /console, a real sshd test host with two GPUs (not enrolled: the tests enrol it, from the console or
// the API), the provisioner, and Debian's Chromium (test/harness/console-browser.ts).
import { mkdir } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { startTestControlPlane, type TestControlPlane, type TestControlPlaneOptions } from '../harness/control-plane.ts';
import { disposeHostWorld, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { builtConsole, launchChromium, SHOTS } from '../harness/console-browser.ts';
import { provisioner } from '../../provisioner/index.ts';

export { axeViolations, keyLeftInBrowser, newPage, shot, signIn } from '../harness/console-browser.ts';

export interface ConsoleWorld {
  cp: TestControlPlane;
  host: TestHost;
  browser: Browser;
  close(): Promise<void>;
}

export interface ConsoleWorldOptions extends TestControlPlaneOptions {
  /** Chromium's extra flags (e.g. a --host-resolver-rules for the port proxy's names) */
  browserArgs?: string[];
}

export async function openConsoleWorld(name: string, opts: ConsoleWorldOptions = {}): Promise<ConsoleWorld> {
  const consoleDir = await builtConsole();
  const host = await startTestHost({ name: `${name}-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  const { browserArgs, ...cpOpts } = opts;
  const cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, ...cpOpts, config: { consoleDir, ...opts.config } });
  const browser = await launchChromium(browserArgs);
  await mkdir(SHOTS, { recursive: true });
  return {
    cp,
    host,
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      const hosts = (await (await cp.api('/v2/hosts')).json().catch(() => ({ hosts: [] }))) as { hosts?: { id: string }[] };
      const hostId = hosts.hosts?.[0]?.id;
      await disposeHostWorld({ cp, host, hostId });
    },
  };
}

