/** `npm start`: one process, every door; SIGTERM/SIGINT stop it gracefully and exit 0. */
import { loadConfig, ConfigError, type Config } from './config/load';
import { createLogger } from './lib/log';
import { startService, type RunningService } from './service';

function configOrExit(): Readonly<Config> {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`estafeta: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  const log = createLogger(config.logLevel);
  let service: RunningService | undefined;
  let signalled: string | undefined;
  const stop = (): void => {
    if (!service) return; // a signal during start-up stops the service once it is up
    service.stop().then(() => process.exit(0), (err: unknown) => {
      log.error({ err }, 'stop failed');
      process.exit(1);
    });
  };
  // Handlers go in first: a SIGTERM that arrives while listeners start must still stop cleanly.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (signalled) return;
      signalled = signal;
      log.info({ event: 'service.stopping', signal }, `${signal}: stopping`);
      stop();
    });
  }
  service = await startService(config, log);
  if (signalled) stop();
}

main().catch((err: unknown) => {
  process.stderr.write(`estafeta: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
