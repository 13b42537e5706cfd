/** When to try a deferred mail again (CONTRACT §2: ESTAFETA_RETRY_DELAYS, ESTAFETA_MAX_QUEUE_AGE). Pure. */

/** Seconds to wait after failed attempt `attempt` (1-based); the last delay repeats. */
export function retryDelay(attempt: number, delays: readonly number[]): number {
  if (delays.length === 0) return 60;
  const index = Math.min(Math.max(attempt, 1), delays.length) - 1;
  return delays[index] ?? delays[delays.length - 1] ?? 60;
}

/**
 * The next attempt time after a temporary failure, or null when the mail has been queued for
 * longer than maxQueueAge (seconds) by then: it is bounced instead of deferred once more.
 */
export function nextAttemptAt(o: { attempt: number; receivedAt: number; now: number; delays: readonly number[]; maxQueueAge: number }): number | null {
  const expiresAt = o.receivedAt + o.maxQueueAge * 1000;
  if (o.now >= expiresAt) return null;
  const next = o.now + retryDelay(o.attempt, o.delays) * 1000;
  // A retry due after the expiry is replaced by the bounce at the expiry time (queue.ts,
  // expiredOutcome): a mail is never held longer than the age, nor tried ahead of its schedule.
  return Math.min(next, expiresAt);
}
