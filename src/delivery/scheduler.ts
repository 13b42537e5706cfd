/**
 * The scheduler (= Postfix qmgr): moves due mails from the store into a small in-memory ready
 * buffer (claimed, so a crash leaves a trace), then starts attempts round-robin across
 * destinations under a per-destination and a global concurrency limit. The buffer is bounded:
 * a million queued mails cost disk, not heap.
 */
import type { Db } from '../store/db';
import type { Logger } from '../lib/log';
import { claimMails, nextDue, releaseClaims, scanDue } from './queue';

export interface SchedulerOptions {
  db: Db;
  log: Logger;
  /** Runs one claimed mail to its outcome; never rejects for an expected delivery failure. */
  run: (id: number) => Promise<void>;
  globalLimit: number;
  destinationLimit: number;
  /** Most mails held claimed in memory at once. */
  bufferSize?: number;
  leaseMs?: number;
  /** Least time between two scans asked for by wake() (default 10 ms): under a stream of acceptances, one scan per batch of commits, not per commit. */
  scanGapMs?: number;
}

export interface Scheduler { start(): void; wake(): void; stop(timeoutMs: number): Promise<void> }

/**
 * How long until the queue is looked at again, from the earliest due time in the store. A due
 * time already past is one of two things: a mail that was due when the last scan looked and is
 * still unclaimed (the buffer had no room; attempts ending make room, so a slow poll will do), or
 * one that fell due after that scan read the clock, in the instant before this runs (a timer fires
 * on the loop's cached clock, a little before Date.now() says it is time). The second must be
 * scanned at once: waiting the poll made a retry come a second late.
 */
export function nextScanDelay(s: { next: number | null; now: number; lastScanAt: number; bufferHasRoom: boolean; scanGapMs: number }): number {
  if (s.next === null) return 30_000;
  if (s.next > s.now) return Math.min(s.next - s.now, 30_000);
  return s.next > s.lastScanAt && s.bufferHasRoom ? s.scanGapMs : 1000;
}

export function createScheduler(o: SchedulerOptions): Scheduler {
  const bufferSize = o.bufferSize ?? Math.max(1000, o.globalLimit * 4);
  const leaseMs = o.leaseMs ?? 10 * 60_000;
  const scanGapMs = o.scanGapMs ?? 10;
  let lastScan = -Infinity;
  let lastScanAt = -Infinity; // the wall clock the last scan compared due times with
  let gapTimer: NodeJS.Timeout | undefined;
  const ready = new Map<string, number[]>(); // destination → claimed mail ids, in due order
  const active = new Map<string, number>(); // destination → attempts in flight
  const running = new Set<Promise<void>>();
  let buffered = 0;
  let stopped = true;
  let scheduled = false;
  // Whether the store may hold due mails not yet scanned: set by wake() (new or rescheduled
  // mails) and by the timer (due times reached, other processes); cleared by a scan that came
  // back short. The completion of an attempt only frees a slot: it dispatches from the buffer
  // without a scan (one scan per attempt was most of the loop's own cost).
  let stale = true;
  let timer: NodeJS.Timeout | undefined;

  /** Scans for due mails when some may wait and the buffer has room; true when it scanned. */
  function refill(): boolean {
    if (!stale || buffered > bufferSize / 2) return false;
    // The gap runs on the monotonic clock: a wall clock stepped back must not stall the scans.
    const sinceScan = performance.now() - lastScan;
    if (sinceScan < scanGapMs) {
      if (!gapTimer) {
        gapTimer = setTimeout(() => { gapTimer = undefined; schedule(); }, Math.min(scanGapMs, scanGapMs - sinceScan));
        gapTimer.unref();
      }
      return false;
    }
    lastScan = performance.now();
    const now = Date.now();
    lastScanAt = now;
    const limit = bufferSize - buffered;
    const due = scanDue(o.db, now, limit);
    // A short scan took every mail due now: nothing more is due until a wake() or the timer.
    if (due.length < limit) stale = false;
    if (!due.length) return true;
    claimMails(o.db, due.map((r) => r.id), now, leaseMs);
    for (const r of due) {
      const q = ready.get(r.rcpt_domain);
      if (q) q.push(r.id);
      else ready.set(r.rcpt_domain, [r.id]);
    }
    buffered += due.length;
    return true;
  }

  function launch(dest: string, id: number): void {
    active.set(dest, (active.get(dest) ?? 0) + 1);
    const p = o.run(id)
      .catch((err: unknown) => o.log.error({ event: 'delivery.error', err, mail_row: id }, 'delivery attempt failed unexpectedly'))
      .finally(() => {
        running.delete(p);
        const n = (active.get(dest) ?? 1) - 1;
        if (n > 0) active.set(dest, n);
        else active.delete(dest);
        schedule();
      });
    running.add(p);
  }

  /** Starts what the limits allow, one mail per destination per round (fairness). */
  function dispatch(): void {
    let progress = true;
    while (progress && running.size < o.globalLimit) {
      progress = false;
      for (const [dest, q] of ready) {
        if (running.size >= o.globalLimit) return;
        if ((active.get(dest) ?? 0) >= o.destinationLimit) continue;
        const id = q.shift();
        if (q.length === 0) ready.delete(dest);
        if (id === undefined) continue;
        buffered--;
        launch(dest, id);
        progress = true;
      }
    }
  }

  function arm(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (stopped) return;
    // An empty queue is still looked at every 30 s, for rows written without a wake() (another process).
    const delay = nextScanDelay({ next: nextDue(o.db), now: Date.now(), lastScanAt, bufferHasRoom: buffered <= bufferSize / 2, scanGapMs });
    timer = setTimeout(onTimer, delay);
    timer.unref();
  }

  function onTimer(): void {
    timer = undefined;
    wake();
  }

  function pump(): void {
    scheduled = false;
    if (stopped) return;
    try {
      const scanned = refill();
      dispatch();
      // A scan may have changed the next due time; without a timer, the queue must still be looked at.
      if (scanned || timer === undefined) arm();
    } catch (err) {
      o.log.error({ event: 'delivery.scheduler_error', err }, 'scheduler pass failed');
      if (timer) clearTimeout(timer);
      timer = setTimeout(onTimer, 1000);
      timer.unref();
    }
  }

  function schedule(): void {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(pump);
  }

  function wake(): void {
    stale = true;
    schedule();
  }

  return {
    start() {
      stopped = false;
      stale = true;
      const resumed = releaseClaims(o.db, Date.now());
      if (resumed) o.log.info({ event: 'delivery.resumed', mails: resumed }, `resumed ${resumed} mails left in flight`);
      schedule();
    },
    wake,
    async stop(timeoutMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (gapTimer) clearTimeout(gapTimer);
      gapTimer = undefined;
      // Claimed but not started: hand them back now, so nothing waits for a lease.
      const waiting = [...ready.values()].flat();
      ready.clear();
      buffered = 0;
      if (waiting.length) releaseClaims(o.db, Date.now(), waiting);
      let deadline: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => { deadline = setTimeout(resolve, timeoutMs); });
      await Promise.race([Promise.allSettled([...running]), expired]);
      clearTimeout(deadline);
    },
  };
}
