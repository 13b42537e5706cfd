/**
 * The composition root: config → store → spool → pipeline → doors → delivery loop, and the
 * graceful stop in the reverse order. main.ts runs it as a process; integration tests run it
 * in-process on port 0.
 */
import http from 'node:http';
import { answerClientError, answerConnect, answerExpectation } from './http/client-error';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { lockDataDir, openDb, type Db } from './store/db';
import { recordServerSettings } from './store/settings';
import { defaultPublicUrl, type Config } from './config/load';
import { createLogger, logReady, type Logger } from './lib/log';
import { createMetrics } from './lib/metrics';
import { createWorkerPool } from './lib/worker-pool';
import { createApp } from './http/app';
import { maxBodyBytes } from './http/middleware/json-body';
import { openSpool } from './spool/spool';
import { queuedMessageCount, spoolFileIsLive } from './store/messages';
import { createAccept } from './accept/accept';
import { createDelivery, type Delivery } from './delivery';
import { startSubmission } from './smtp/submission';
import { formatAddress, type Listener } from './smtp/listen';
import { heldReportBytes, startMx } from './smtp/mx';

export interface RunningService {
  config: Readonly<Config>;
  db: Db;
  log: Logger;
  delivery: Delivery;
  /** Bound ports (port 0 in the config becomes the real port here); smtps/mx absent when off. */
  ports: { http: number; smtp?: number; smtps?: number; mx?: number };
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

export async function startService(config: Readonly<Config>, log: Logger = createLogger(config.logLevel)): Promise<RunningService> {
  const lock = lockDataDir(config.dataDir);
  try {
    return await startLocked(config, log, lock);
  } catch (err) {
    lock.release(); // a failed start (a port in use) leaves the data dir to the next one
    throw err;
  }
}

async function startLocked(config: Readonly<Config>, log: Logger, lock: { release(): void }): Promise<RunningService> {
  const db = openDb(config.dataDir);
  const metrics = createMetrics();
  // The spool reclaims a segment once no message still to deliver references it.
  const spool = openSpool(config.dataDir, { live: (file) => spoolFileIsLive(db, file), registry: metrics.registry });
  // One worker thread per spare core (at most 4) for the pure CPU work of accept and delivery;
  // the event loop keeps a core for the doors and the store.
  const workers = createWorkerPool(Math.min(4, Math.max(1, os.availableParallelism() - 1)));

  // The HTTP port is bound first: with port 0, the default public URL (every mail's tracking and
  // unsubscribe links) names the port actually bound, not port 0. The app handles requests from
  // the turn the listen resolves in, before any connection is read.
  // Host is checked by the app (a 400 problem like the others) rather than Node's bare 400.
  const httpServer = http.createServer({ requireHostHeader: false });
  httpServer.on('clientError', answerClientError);
  httpServer.on('connect', answerConnect);
  httpServer.on('checkExpectation', answerExpectation);
  httpServer.keepAliveTimeout = 5000;
  const httpAddr = await listen(httpServer, config.httpPort, config.host);
  config = config.httpPort === 0 && config.publicUrl === defaultPublicUrl(config.host, 0)
    ? { ...config, publicUrl: defaultPublicUrl(config.host, httpAddr.port) } : config;

  const delivery = createDelivery({ db, config, log: log.child({ component: 'delivery' }), spool, workers, metrics });
  const accept = createAccept({ db, config, log: log.child({ component: 'accept' }), spool, workers, metrics, onQueued: () => delivery.wake() });
  metrics.watchQueue(() => (db.open ? queuedMessageCount(db) : 0));
  metrics.watchHeldReports(heldReportBytes);
  let ready = false;
  let stopping: Promise<void> | undefined;
  const { app } = createApp({ db, config, log: log.child({ component: 'http' }), isReady: () => ready, isStopping: () => stopping !== undefined, metrics, accept, spool, delivery });
  const handle = app.callback();
  httpServer.on('request', handle);
  // Expect: 100-continue (curl past 1 MB): a body whose declared size is refused anyway is not
  // invited; the 413 comes instead of the 100, and the client need not send it (RFC 9110 §10.1.1).
  httpServer.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) res.setHeader('Connection', 'close');
    else res.writeContinue();
    void handle(req, res);
  });
  logReady(log, { listener: 'http', address: formatAddress(httpAddr) }, `http listening on ${formatAddress(httpAddr)}`);

  const listeners: Listener[] = [
    ...(await startSubmission({ db, config, log: log.child({ component: 'submission' }), accept, metrics })),
    ...(await startMx({ db, config, log: log.child({ component: 'mx' }) })),
  ];
  const ports: RunningService['ports'] = { http: httpAddr.port };
  for (const l of listeners) ports[l.name as 'smtp' | 'smtps' | 'mx'] = l.port;
  delivery.start();
  // Once every listener is up: a start that fails (a port in use) leaves the running server's.
  recordServerSettings(db, { hostname: config.hostname, dnsServers: config.dnsServers }, Date.now());
  ready = true;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      ready = false;
      const deadline = setTimeout(() => httpServer.closeAllConnections(), config.shutdownTimeout * 1000);
      deadline.unref();
      const httpClosed = new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeIdleConnections();
      });
      await Promise.all([httpClosed, ...listeners.map((l) => l.close()), delivery.stop()]);
      clearTimeout(deadline);
      await workers.close();
      db.close();
      lock.release();
      log.info({ event: 'service.stopped' }, 'stopped');
    })();
    return stopping;
  };

  return { config, db, log, delivery, ports, stop };
}
