/**
 * Group commit (DESIGN.md rule 2): each accepted message's bytes are written and fsync'd to the
 * spool as soon as they are ready (concurrently, on the thread pool); whatever has been written
 * while the previous commit ran is then published together: one directory fsync, one SQLite
 * transaction for all their rows. A submission resolves only after that commit, so an
 * acknowledged message always has both its file and its rows; an unacknowledged one leaves at
 * most a file that the start-up sweep removes.
 */
import type { Db } from '../store/db';
import type { Spool } from '../spool/spool';
import type { Logger } from '../lib/log';
import type { InstanceRow } from '../store/instances';
import { chargeSends, insertMessage, liveSpoolFiles, registerCategory, type MessageInsert } from '../store/messages';
import { insertMail, insertMailLog, type MailInsert, type MailLogInsert } from '../store/mails';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { usedInCycle, type Cycle } from './policy';

export interface Acceptance {
  instance: InstanceRow;
  message: MessageInsert;
  mails: { row: Omit<MailInsert, 'messageId'>; logs: MailLogInsert[] }[];
  bytes: Buffer;
  charged: number;
  cycle: Cycle;
}

export interface Committer {
  /** Resolves once the message's file and rows are durable; rejects with a ServiceError otherwise. */
  commit(a: Acceptance): Promise<void>;
}

interface Waiting { a: Acceptance; resolve: () => void; reject: (err: unknown) => void }

export function createCommitter(deps: { db: Db; spool: Spool; log: Logger; onQueued: () => void }): Committer {
  const { db, spool, log } = deps;
  const ready = sweep(db, spool, log);
  let queue: Waiting[] = [];
  let flushing = false;

  // The plan quota is checked again here, serialized with every other commit: concurrent sends
  // that each passed the early check cannot together overrun the limit.
  const insertOne = db.transaction((a: Acceptance) => {
    const limit = a.instance.send_limit;
    if (limit !== null && a.charged > 0) {
      const remaining = Math.max(0, limit - usedInCycle(db, a.instance.id, a.cycle.start));
      if (a.charged > remaining) {
        throw new ServiceError('plan_send_limit_exceeded', `This send needs ${a.charged} of the plan's sends; ${remaining} remain in the current cycle.`, {
          limit, remaining, reset_at: iso(a.cycle.resetAt),
        });
      }
    }
    const messageId = insertMessage(db, a.instance.id, a.message);
    for (const m of a.mails) {
      const row = insertMail(db, a.instance.id, { ...m.row, messageId });
      for (const l of m.logs) insertMailLog(db, row, l);
    }
    if (a.message.category) registerCategory(db, a.instance.id, a.message.category, a.message.receivedAt);
    chargeSends(db, a.instance.id, a.cycle.start, a.charged);
  });

  /** One transaction for the batch; an item refused by policy rolls back to its own savepoint. */
  const insertBatch = db.transaction((batch: Waiting[]) => batch.map((w): ServiceError | null => {
    try {
      insertOne(w.a);
      return null;
    } catch (err) {
      if (err instanceof ServiceError) return err;
      throw err;
    }
  }));

  const flush = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      let results: (ServiceError | null)[];
      try {
        await spool.syncDir();
        results = insertBatch(batch);
      } catch (err) {
        await Promise.all(batch.map((w) => spool.remove(w.a.message.spoolFile)));
        for (const w of batch) w.reject(err);
        continue;
      }
      let queued = false;
      await Promise.all(batch.map(async (w, i) => {
        const failed = results[i];
        // A refused send, or one whose every recipient was dropped, keeps no file.
        if (failed || w.a.message.pending === 0) await spool.remove(w.a.message.spoolFile);
        if (failed) return w.reject(failed);
        if (w.a.message.pending > 0) queued = true;
        w.resolve();
      }));
      if (queued) deps.onQueued();
    }
  };

  const kick = (): void => {
    if (flushing) return;
    flushing = true;
    flush().catch((err: unknown) => log.error({ err, event: 'accept.flush_failed' }, 'group commit failed')).finally(() => {
      flushing = false;
      if (queue.length > 0) kick();
    });
  };

  return {
    async commit(a) {
      await ready;
      try {
        await spool.write(a.message.spoolFile, a.bytes);
      } catch (err) {
        await spool.remove(a.message.spoolFile);
        throw err;
      }
      return new Promise<void>((resolve, reject) => {
        queue.push({ a, resolve, reject });
        kick();
      });
    },
  };
}

/**
 * Start-up sweep (crash = restart): temporary files of interrupted writes, files of messages
 * never committed, and files whose recipients are all final are removed before any new commit.
 */
async function sweep(db: Db, spool: Spool, log: Logger): Promise<void> {
  const tmp = await spool.removeTemporary();
  const live = liveSpoolFiles(db);
  const orphans = (await spool.list()).filter((f) => !live.has(f));
  await Promise.all(orphans.map((f) => spool.remove(f)));
  if (tmp + orphans.length > 0) log.info({ event: 'accept.spool_swept', temporary: tmp, orphans: orphans.length }, 'spool swept at start');
}
