// Client commands with GPUFLEET_API_KEY unset (empty): exit 2 (wrong usage, like a missing --identity
// file), one line on stderr naming the variable, no stack trace, nothing on stdout. GPUFLEET_URL names
// a port nothing listens on: had a request been tried, the answer would be a connection error instead.
import { expect, test } from 'vitest';
import { freePort } from '../harness/control-plane.ts';
import { runCli } from './run-cli.ts';

const LINE = 'error: GPUFLEET_API_KEY is not set: set it to an API key (gpufleet keys create, or the admin key printed at first start)\n';

test('pods, hosts, keys and accounts commands without GPUFLEET_API_KEY exit 2 with one line', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  for (const args of [['pods', 'list'], ['hosts', 'list'], ['keys', 'list'], ['accounts', 'list'], ['pods', 'get', 'p1', '--json']]) {
    const r = await runCli(args, { url, key: '' });
    expect(r, args.join(' ')).toEqual({ code: 2, stdout: '', stderr: LINE });
  }
});
