// `gpufleet serve` (what `npm start` runs): the control plane on one port, plus the provisioner.
import { Command } from 'commander';

export function serveCommand(): Command {
  return new Command('serve').description('serve the control plane (PORT, HOST, GPUFLEET_DATA_DIR, …)').action(async () => {
    // loaded here, not at the top: each command loads what it needs when it runs (most are small API
    // clients and start faster without these); test/architecture/cli-start.test.ts holds cli/main.ts's
    // static imports to cli/ and client/
    const [{ configFromEnv, workerRelayPortWarning }, { serveLogger }, { startControlPlane }, { provisioner }, { loadBalancerGateway, podPortProxy }] = await Promise.all([
      import('../core/index.ts'),
      import('./serve-logger.ts'),
      import('../api/index.ts'),
      import('../provisioner/index.ts'),
      import('../gateway/index.ts'),
    ]);
    const config = configFromEnv();
    // no line of any component (server, provisioner) may hold an API key: docs/auth.md
    const logger = serveLogger(config.logLevel);
    // load-balancing endpoints are served on the same origin, through their hosts' SSH connections
    // (docs/gateway.md); pods' HTTP ports on the proxy domain, picked by Host, first (docs/connect.md)
    const cp = await startControlPlane(config, {
      logger,
      background: config.provisioner ? [provisioner({ logger })] : [],
      mounts: [podPortProxy(), loadBalancerGateway()],
    });
    if (cp.bootstrapKey && !config.bootstrapKey)
      process.stdout.write(`\nNo API key existed, so an admin key was created. It is shown this once:\n\n  ${cp.bootstrapKey}\n\n`);
    logger.info({ url: cp.url, dataDir: config.dataDir, replicaId: cp.services.replicaId }, 'gpufleet control plane listening');
    process.stdout.write(nextSteps(cp.url, cp.bootstrapKey !== null && !config.bootstrapKey, workerRelayPortWarning(config)));
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      await cp.close();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
  });
}

/**
 * What to do after `npm start`: the URL, the docs, and how to enrol a first host. Never the key itself:
 * it is printed once, above, at first start only (docs/auth.md).
 */
export function nextSteps(url: string, keyShownAbove: boolean, warning?: string): string {
  // a wildcard address is where the server listens, not one a client can call
  const local = url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, 'http://127.0.0.1');
  const key = keyShownAbove ? '<the key above>' : '<an admin key>';
  return (
    `\ngpufleet is listening on ${local}; API docs: ${local}/v2/docs\n` +
    `Next, enrol a GPU host:\n` +
    `  export GPUFLEET_URL=${local} GPUFLEET_API_KEY=${key}\n` +
    `  npx gpufleet hosts enroll root@<host> --identity <ssh key file> --datacenter <dc>\n\n` +
    (warning ? `Warning: ${warning}\n\n` : '')
  );
}
