/** Random identifiers and secrets. */
import crypto from 'node:crypto';

/** Lowercase base32 (RFC 4648 alphabet): safe in DNS labels, URLs and file names. */
const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';

// Random bytes are drawn from the CSPRNG a pool at a time: one randomFillSync per 4 KiB instead
// of one per identifier (several per send). Every byte is handed out once, then the pool refills.
const pool = Buffer.alloc(4096);
let used = pool.length;

/** Reserves `n` ≤ 4096 unused bytes of the pool; returns their offset. */
function take(n: number): number {
  if (used + n > pool.length) {
    crypto.randomFillSync(pool);
    used = 0;
  }
  used += n;
  return used - n;
}

/** `n` fresh random bytes. */
export function randomBytes(n: number): Buffer {
  if (n > pool.length) return crypto.randomBytes(n);
  const at = take(n);
  const out = Buffer.from(pool.subarray(at, at + n));
  pool.fill(0, at, at + n); // a byte handed out is not left behind in the pool
  return out;
}

export function randomToken(length: number): string {
  if (length > pool.length) return [...crypto.randomBytes(length)].map((b) => alphabet[b & 31]).join('');
  const at = take(length);
  let out = '';
  for (let i = at; i < at + length; i++) out += alphabet[pool[i] & 31];
  pool.fill(0, at, at + length);
  return out;
}

/** `bytes` random bytes as lowercase hex (trace ids). */
export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

export function sha256(text: string): Buffer {
  return crypto.createHash('sha256').update(text).digest();
}
