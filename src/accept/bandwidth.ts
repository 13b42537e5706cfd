/**
 * The per-instance bandwidth limit (spec, Limits rule 5): a token bucket on message bytes.
 * Rate and capacity are read from the instance row on every send, so `instance limits` acts on
 * the next request; only the bucket levels live in memory (a restart refills them, by design).
 */
import type { InstanceRow } from '../store/instances';
import { ServiceError } from '../errors';

/** `rate`: the rate the bucket last refilled at (bytes per second). */
interface Bucket { tokens: number; at: number; rate: number }

export interface Bandwidth {
  /** Takes `bytes` from the instance's bucket, or throws 413 (over capacity) / 429 (retry later). */
  take(instance: InstanceRow, bytes: number, at: number): void;
  /** Gives bytes back when a send fails after taking them. */
  refund(instance: InstanceRow, bytes: number): void;
}

export function createBandwidth(): Bandwidth {
  const buckets = new Map<number, Bucket>();
  const capacityOf = (i: InstanceRow, rate: number): number => i.bandwidth_burst_bytes ?? rate;
  return {
    take(instance, bytes, at) {
      const rate = instance.bandwidth_bytes_per_second;
      if (rate === null) return;
      const capacity = capacityOf(instance, rate);
      if (bytes > capacity) {
        throw new ServiceError('request_too_large', `The message (${bytes} bytes) exceeds the burst capacity of the instance bandwidth limit (${capacity} bytes).`, { max_bytes: capacity });
      }
      const b = buckets.get(instance.id) ?? { tokens: capacity, at, rate };
      // The time since the last send passed under the rate then in force: a limit changed since
      // (`instance limits`) judges traffic from this request on, not the idle time before it.
      b.tokens = Math.min(capacity, b.tokens + ((at - b.at) / 1000) * b.rate);
      b.at = at;
      b.rate = rate;
      buckets.set(instance.id, b);
      if (b.tokens < bytes) {
        const wait = Math.max(1, Math.ceil((bytes - b.tokens) / rate));
        throw new ServiceError('rate_limit_exceeded', `The instance bandwidth limit is exceeded; retry in ${wait} s.`, {}, { 'Retry-After': String(wait) });
      }
      b.tokens -= bytes;
    },
    refund(instance, bytes) {
      const b = buckets.get(instance.id);
      const rate = instance.bandwidth_bytes_per_second;
      if (b && rate !== null) b.tokens = Math.min(capacityOf(instance, rate), b.tokens + bytes);
    },
  };
}
