/** `npm start`: one process, every door; SIGTERM/SIGINT stop it gracefully and exit 0. */
import type { Config } from './config/load';

// The handlers go in before any module of the service is loaded (that takes most of a second):
// without one, a SIGTERM in that window would kill the process instead of stopping it (exit 0).
// A signal before the service is up is kept and acted on once it is.
let signalled: string | undefined;
let stop: () => void = () => undefined;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (signalled) return;
    signalled = signal;
    stop();
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
  const service = await startService(config, log);
  stop = () => {
    log.info({ event: 'service.stopping', signal: signalled }, `${signalled}: stopping`);
    service.stop().then(() => process.exit(0), (err: unknown) => {
      log.error({ err }, 'stop failed');
      process.exit(1);
    });
  };
  if (signalled) stop();
}

main().catch((err: unknown) => {
  process.stderr.write(`estafeta: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
