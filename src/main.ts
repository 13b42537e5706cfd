/** `npm start`: one process, every door; SIGTERM/SIGINT stop it gracefully and exit 0. */
import type { Config } from './config/load';
import type { RunningService } from './service';

// The handlers go in before any module of the service is loaded (that takes most of a second):
// a SIGTERM that arrives while the process loads or its listeners start must still exit 0.
let signalled: string | undefined;
let onSignal: ((signal: string) => void) | undefined;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (signalled) return;
    signalled = signal;
    // Nothing started yet (no store open, no listener): there is nothing to stop.
    if (!onSignal) process.exit(0);
    onSignal(signal);
  });
}

async function main(): Promise<void> {
  const { loadConfig, ConfigError } = require('./config/load') as typeof import('./config/load');
  let config: Readonly<Config>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`estafeta: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const { createLogger } = require('./lib/log') as typeof import('./lib/log');
  const { startService } = require('./service') as typeof import('./service');
  const log = createLogger(config.logLevel);
  let service: RunningService | undefined;
  const stop = (): void => {
    if (!service) return; // a signal during start-up stops the service once it is up
    service.stop().then(() => process.exit(0), (err: unknown) => {
      log.error({ err }, 'stop failed');
      process.exit(1);
    });
  };
  onSignal = (signal) => {
    log.info({ event: 'service.stopping', signal }, `${signal}: stopping`);
    stop();
  };
  if (signalled) process.exit(0); // arrived while the modules loaded: nothing started yet
  service = await startService(config, log);
  if (signalled) stop();
}

main().catch((err: unknown) => {
  process.stderr.write(`estafeta: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
