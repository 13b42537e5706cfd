/**
 * The retention purge: once a day, messages received before the 3-month online window are
 * deleted with their mails (logs and engagement events cascade) and their spool files.
 * Started by createAccept; the timer never keeps the process alive and stops with the store.
 */
import type { Db } from '../store/db';
import type { Spool } from '../spool/spool';
import type { Logger } from '../lib/log';
import { deleteMessage, messagesReceivedBefore } from '../store/messages';
import { now } from '../lib/time';
import { retentionStart } from './ids';

const day = 86_400_000;
const batchSize = 500;

/** One purge pass; returns how many messages it removed. Exported for the tests and the CLI. */
export async function purgeExpired(db: Db, spool: Spool, at: number = now()): Promise<number> {
  const cutoff = retentionStart(at);
  let removed = 0;
  for (;;) {
    const batch = messagesReceivedBefore(db, cutoff, batchSize);
    if (batch.length === 0) return removed;
    // Rows first: a crash between the two leaves only orphan files, which the start-up sweep removes.
    db.transaction(() => batch.forEach((m) => deleteMessage(db, m.id)))();
    await Promise.all(batch.map((m) => spool.remove(m.spool_file)));
    removed += batch.length;
  }
}

export function startPurge(deps: { db: Db; spool: Spool; log: Logger }): void {
  const run = (): void => {
    if (!deps.db.open) return;
    purgeExpired(deps.db, deps.spool).then(
      (n) => { if (n > 0) deps.log.info({ event: 'accept.purged', messages: n }, 'purged mails past retention'); },
      (err: unknown) => deps.log.error({ err, event: 'accept.purge_failed' }, 'retention purge failed'),
    );
  };
  setTimeout(run, 60_000).unref();
  setInterval(run, day).unref();
}
