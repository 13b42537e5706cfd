/**
 * The composition root: config → store → doors → delivery loop, and the graceful stop in the
 * reverse order. main.ts runs it as a process; integration tests run it in-process on port 0.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDb, type Db } from './store/db';
import type { Config } from './config/load';
import { createLogger, type Logger } from './lib/log';
import { createMetrics } from './lib/metrics';
import { createApp } from './http/app';

export interface RunningService {
  config: Readonly<Config>;
  db: Db;
  log: Logger;
  /** Bound addresses (port 0 in the config becomes the real port here). */
  ports: { http: number };
  stop: () => Promise<void>;
}

function listen(server: http.Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

const fmt = (a: AddressInfo): string => (a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`);

export async function startService(config: Readonly<Config>, log: Logger = createLogger(config.logLevel)): Promise<RunningService> {
  const db = openDb(config.dataDir);
  const metrics = createMetrics();
  let ready = false;
  const { app } = createApp({ db, config, log: log.child({ component: 'http' }), isReady: () => ready, metrics });

  const httpServer = http.createServer(app.callback());
  httpServer.keepAliveTimeout = 5000;
  const httpAddr = await listen(httpServer, config.httpPort, config.host);
  log.info({ event: 'listener.ready', listener: 'http', address: fmt(httpAddr) }, `http listening on ${fmt(httpAddr)}`);
  ready = true;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      ready = false;
      const deadline = setTimeout(() => httpServer.closeAllConnections(), config.shutdownTimeout * 1000);
      deadline.unref();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeIdleConnections();
      });
      clearTimeout(deadline);
      db.close();
      log.info({ event: 'service.stopped' }, 'stopped');
    })();
    return stopping;
  };

  return { config, db, log, ports: { http: httpAddr.port }, stop };
}
