/**
 * The delivery loop: scheduler → attempt (route, track, sign, SMTP) → outcome written to the
 * store. Outcomes of attempts finishing together share one transaction (group commit), and a
 * message's spool file is removed once its last recipient is final.
 */
import { syncWal, withoutSync, type Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Metrics } from '../lib/metrics';
import type { Spool } from '../spool/spool';
import type { WorkerPool } from '../lib/worker-pool';
import { trackingSecret } from '../tracking/links';
import { createComposePool } from './compose-pool';
import { createScheduler } from './scheduler';
import { createRouter } from './route';
import { createTransport, NotStarted } from './transport';
import { attemptDelivery, type AttemptDeps } from './attempt';
import { expiredOutcome, loadAttempt, writeOutcome, type AttemptRow, type Written } from './queue';
import type { Outcome } from './outcome';

export interface Delivery {
  start(): void;
  /** Called by accept after a commit with queued mails: look for due work now. */
  wake(): void;
  /** Stops taking new work and waits (bounded) for attempts in flight. */
  stop(): Promise<void>;
}

export interface DeliveryDeps { db: Db; config: Readonly<Config>; log: Logger; spool: Spool; workers: WorkerPool; metrics?: Pick<Metrics, 'deliveryOutcomes'> }

interface Pending { mail: AttemptRow; outcome: Outcome; at: number }

interface OutcomeWriter {
  /** Queues an outcome; it is committed with the others of the next flush (at most `delayMs` later). */
  write(mail: AttemptRow, outcome: Outcome): void;
  /** Commits what is queued now (graceful stop). */
  drain(): void;
}

/**
 * Group commit of outcomes: one transaction (one fsync) for every outcome ready within a few
 * milliseconds. The attempt's slot is freed before the commit; its claim stays until the commit,
 * so a crash in between means a retry after restart (at-least-once), never a lost outcome.
 */
function createOutcomeWriter({ db, config, log, spool, metrics }: DeliveryDeps, onCommitted: () => void, delayMs = 5): OutcomeWriter {
  let batch: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  const policy = { retryDelays: config.retryDelays, maxQueueAge: config.maxQueueAge };
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const items = batch;
    batch = [];
    if (items.length === 0 || !db.open) return;
    let written: Written[] = [];
    try {
      written = withoutSync(db, () => db.transaction(() => items.map((p) => writeOutcome(db, p.mail, p.outcome, p.at, policy)))());
    } catch (err) {
      // The claims stay: these mails are retried after the lease or the next restart.
      log.error({ event: 'delivery.outcome_write_failed', err, mails: items.length }, 'outcomes not written');
      return;
    }
    const files = written.flatMap((w) => (w.file === null ? [] : [w.file]));
    for (const w of written) if (w.kind) metrics?.deliveryOutcomes.inc({ outcome: w.kind });
    for (const p of items) {
      log.debug({ event: `delivery.${p.outcome.kind}`, mail_id: p.mail.mail_id, instance: p.mail.instance_id, detail: p.outcome.detail }, `mail ${p.outcome.kind}`);
    }
    // Deferrals changed the next due time: let the scheduler re-arm its timer.
    onCommitted();
    // Bytes go only once the outcome that frees them is on disk (WAL fdatasync off the event
    // loop): a power loss must never leave a pending row whose bytes are gone.
    if (files.length === 0) return;
    syncWal(db).then(() => {
      for (const f of files) spool.remove(f).catch((err: unknown) => log.error({ event: 'spool.remove_failed', err, file: f }, 'spool file not removed'));
    }, (err: unknown) => log.error({ event: 'delivery.wal_sync_failed', err }, 'outcomes not made durable; spool kept until the next start'));
  };
  return {
    write(mail, outcome) {
      batch.push({ mail, outcome, at: Date.now() });
      if (batch.length >= 500) flush();
      else timer ??= setTimeout(flush, delayMs);
    },
    drain: () => flush(),
  };
}

export function createDelivery(deps: DeliveryDeps): Delivery {
  const { db, config, log, spool } = deps;
  const transport = createTransport({ hostname: config.hostname, maxConnections: config.destinationConcurrency });
  const attemptDeps: AttemptDeps = {
    db, spool, transport,
    router: createRouter({ dnsServers: config.dnsServers, deliveryPort: config.deliveryPort, relay: config.relay }),
    composer: createComposePool(deps.workers),
    publicUrl: config.publicUrl,
    secret: trackingSecret(config.dataDir),
    hostname: config.hostname,
  };
  const writer = createOutcomeWriter(deps, () => scheduler.wake());
  const policy = { retryDelays: config.retryDelays, maxQueueAge: config.maxQueueAge };

  async function run(id: number): Promise<void> {
    const mail = loadAttempt(db, id);
    if (!mail || (mail.status !== 2 && mail.status !== 5)) return;
    let outcome: Outcome;
    try {
      outcome = await attemptDelivery(attemptDeps, mail, (m) => expiredOutcome(db, m, Date.now(), policy));
    } catch (err) {
      if (err instanceof NotStarted) return; // the stop came first: no outcome, due again at the next start
      // A bug or a local outage (spool unreadable): retry later rather than lose the mail.
      log.error({ event: 'delivery.attempt_error', err, mail_id: mail.mail_id }, 'attempt failed locally');
      outcome = { kind: 'deferred', scope: 'message', response: '451 4.3.0 local error', detail: 'local error during the attempt' };
    }
    if (!db.open) return; // stopped while the attempt ran: its claim makes it due after restart
    writer.write(mail, outcome);
  }

  const scheduler = createScheduler({
    db, log, run, globalLimit: config.deliveryConcurrency, destinationLimit: config.destinationConcurrency,
  });
  return {
    start: () => scheduler.start(),
    wake: () => scheduler.wake(),
    async stop() {
      const stopped = scheduler.stop(config.shutdownTimeout * 1000); // starts nothing more from now
      transport.drain();
      await stopped;
      writer.drain();
      transport.close();
    },
  };
}
