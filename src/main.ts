/** `npm start`: one process, every door; SIGTERM/SIGINT stop it gracefully and exit 0. */
import type { Config } from './config/load';

// The handlers go in before any module of the service is loaded (that takes most of a second):
// without one, a SIGTERM in that window would kill the process instead of stopping it (exit 0).
// A signal before the service is up is kept and acted on once it is.
// The parent as it was at the very start: `npm start` (see watchNpm), read before anything loads.
const startParent = process.ppid;
let signalled: string | undefined;
let stop: () => void = () => undefined;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (signalled) return;
    signalled = signal;
    stop();
  });
}

/** The configuration once loaded: a failed start names the setting from it (startFailure). */
let loaded: Readonly<Config> | undefined;

async function main(): Promise<void> {
  const { loadConfig, ConfigError } = require('./config/load') as typeof import('./config/load');
  let config: Readonly<Config>;
  try {
    config = loadConfig();
    loaded = config;
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
  watchNpm(log);
  stop = () => {
    log.info({ event: 'service.stopping', signal: signalled }, `${signalled}: stopping`);
    service.stop().then(() => process.exit(0), (err: unknown) => {
      log.error({ err }, 'stop failed');
      process.exit(1);
    });
  };
  if (signalled) stop();
}

/**
 * Under `npm start` the service is npm's child: npm forwards SIGTERM and SIGINT, but a SIGKILL to
 * npm (a supervisor killing the pid it started) would leave the service running unseen, holding
 * its ports and its data dir against the next start. Once npm is gone without a word, the service
 * ends as abruptly as its parent did; everything acknowledged is already on disk.
 */
function watchNpm(log: { warn: (o: object, msg: string) => void }): void {
  if (process.env.npm_lifecycle_event !== 'start') return;
  const check = (): void => {
    if (process.ppid === startParent) return;
    log.warn({ event: 'service.orphaned', parent: startParent }, 'npm start is gone: exiting with it');
    process.exit(1);
  };
  check(); // npm may have been killed while the service was starting
  setInterval(check, 200).unref();
}

/**
 * One line for a start that failed past the configuration checks (a port taken, an address this
 * machine does not have, a data dir that cannot be made), naming the setting it comes from; the
 * stack only at debug level.
 */
function startFailure(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { port?: number; address?: string; syscall?: string; hostname?: string };
  const message = e instanceof Error ? e.message : String(err);
  const c = loaded;
  const ports: [string, number | null | undefined][] = [['ESTAFETA_HTTP_PORT', c?.httpPort], ['ESTAFETA_SMTP_PORT', c?.smtpPort], ['ESTAFETA_SMTPS_PORT', c?.smtpsPort], ['ESTAFETA_MX_PORT', c?.mxPort]];
  let setting = '';
  if (e.syscall === 'listen' && (e.code === 'EADDRINUSE' || e.code === 'EACCES')) {
    setting = ports.find(([, v]) => typeof v === 'number' && v === e.port)?.[0] ?? 'a listener port';
  } else if (e.syscall === 'listen' || e.syscall === 'getaddrinfo' || e.code === 'EADDRNOTAVAIL') {
    setting = 'ESTAFETA_HOST';
  } else if (e.code === 'EDATADIRLOCKED' || (typeof e.path === 'string' && ['EEXIST', 'EACCES', 'ENOTDIR', 'EROFS', 'EPERM', 'ENOENT', 'ENOSPC'].includes(e.code ?? ''))) {
    setting = 'ESTAFETA_DATA_DIR';
  }
  const debug = /^(debug|trace)$/.test(c?.logLevel ?? process.env.ESTAFETA_LOG_LEVEL ?? '') && e instanceof Error ? `\n${e.stack}` : '';
  return `estafeta: failed to start${setting ? ` (${setting})` : ''}: ${message}${debug}`;
}

main().catch((err: unknown) => {
  process.stderr.write(`${startFailure(err)}\n`);
  process.exit(1);
});
