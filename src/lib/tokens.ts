/** Random identifiers and secrets. */
import crypto from 'node:crypto';

/** Lowercase base32 (RFC 4648 alphabet): safe in DNS labels, URLs and file names. */
const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';

export function randomToken(length: number): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[bytes[i] & 31];
  return out;
}

export function sha256(text: string): Buffer {
  return crypto.createHash('sha256').update(text).digest();
}
