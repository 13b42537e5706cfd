/** `npm start`: one process, every door; SIGTERM/SIGINT stop it gracefully and exit 0. */
import { loadConfig, ConfigError } from './config/load';
import { createLogger } from './lib/log';
import { startService } from './service';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`estafeta: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  // Handlers go in before the listeners start: a SIGTERM during start-up still stops cleanly, exit 0.
  let signalled = false;
  let started: Promise<Awaited<ReturnType<typeof startService>>> | undefined;
  const shutdown = (signal: string): void => {
    if (signalled) return;
    signalled = true;
    log.info({ event: 'service.stopping', signal }, `${signal}: stopping`);
    void (started ?? Promise.reject(new Error('not started')))
      .then((service) => service.stop())
      .then(() => process.exit(0), (err: unknown) => {
        log.error({ err }, 'stop failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  started = startService(config, log);
  await started;
}

main().catch((err: unknown) => {
  process.stderr.write(`estafeta: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
