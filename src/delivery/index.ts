/**
 * The delivery loop: scheduler → attempt (route, track, sign, SMTP) → outcome written to the
 * store. Outcomes of attempts finishing together share one transaction (group commit), and a
 * message's spool file is removed once its last recipient is final.
 */
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Spool } from '../spool/spool';
import { linkBuilder, trackingSecret } from '../tracking/links';
import { createScheduler } from './scheduler';
import { createRouter } from './route';
import { createTransport } from './transport';
import { attemptDelivery, type AttemptDeps } from './attempt';
import { loadAttempt, writeOutcome, type AttemptRow } from './queue';
import type { Outcome } from './outcome';

export interface Delivery {
  start(): void;
  /** Called by accept after a commit with queued mails: look for due work now. */
  wake(): void;
  /** Stops taking new work and waits (bounded) for attempts in flight. */
  stop(): Promise<void>;
}

export interface DeliveryDeps { db: Db; config: Readonly<Config>; log: Logger; spool: Spool }

interface Pending { mail: AttemptRow; outcome: Outcome; at: number; done: () => void; fail: (err: unknown) => void }

/** Batches outcome writes: one transaction (one fsync) for every outcome ready in the same tick. */
function createOutcomeWriter({ db, config, log, spool }: DeliveryDeps): (mail: AttemptRow, outcome: Outcome) => Promise<void> {
  let batch: Pending[] = [];
  const policy = { retryDelays: config.retryDelays, maxQueueAge: config.maxQueueAge };
  const flush = (): void => {
    const items = batch;
    batch = [];
    let files: string[] = [];
    try {
      files = db.transaction(() => items.map((p) => writeOutcome(db, p.mail, p.outcome, p.at, policy)).filter((f): f is string => f !== null))();
    } catch (err) {
      for (const p of items) p.fail(err);
      return;
    }
    for (const p of items) {
      log.info({ event: `delivery.${p.outcome.kind}`, mail_id: p.mail.mail_id, instance: p.mail.instance_id, detail: p.outcome.detail }, `mail ${p.outcome.kind}`);
      p.done();
    }
    for (const f of files) spool.remove(f).catch((err: unknown) => log.error({ event: 'spool.remove_failed', err, file: f }, 'spool file not removed'));
  };
  return (mail, outcome) => new Promise((done, fail) => {
    if (batch.length === 0) setImmediate(flush);
    batch.push({ mail, outcome, at: Date.now(), done, fail });
  });
}

export function createDelivery(deps: DeliveryDeps): Delivery {
  const { db, config, log, spool } = deps;
  const transport = createTransport({ hostname: config.hostname, maxConnections: config.destinationConcurrency });
  const attemptDeps: AttemptDeps = {
    db, spool, transport,
    router: createRouter({ dnsServers: config.dnsServers, deliveryPort: config.deliveryPort, relay: config.relay }),
    links: linkBuilder(config.publicUrl, trackingSecret(config.dataDir)),
    hostname: config.hostname,
  };
  const write = createOutcomeWriter(deps);

  async function run(id: number): Promise<void> {
    const mail = loadAttempt(db, id);
    if (!mail || (mail.status !== 2 && mail.status !== 5)) return;
    let outcome: Outcome;
    try {
      outcome = await attemptDelivery(attemptDeps, mail);
    } catch (err) {
      // A bug or a local outage (spool unreadable): retry later rather than lose the mail.
      log.error({ event: 'delivery.attempt_error', err, mail_id: mail.mail_id }, 'attempt failed locally');
      outcome = { kind: 'deferred', scope: 'message', response: '451 4.3.0 local error', detail: 'local error during the attempt' };
    }
    if (!db.open) return; // stopped while the attempt ran: its claim makes it due after restart
    await write(mail, outcome);
  }

  const scheduler = createScheduler({ db, log, run, globalLimit: config.deliveryConcurrency, destinationLimit: config.destinationConcurrency });
  return {
    start: () => scheduler.start(),
    wake: () => scheduler.wake(),
    async stop() {
      await scheduler.stop(config.shutdownTimeout * 1000);
      transport.close();
    },
  };
}
