/**
 * Header work on a client's raw message: removing fields while keeping everything else byte for
 * byte (folded continuation lines included, RFC 5322 §2.2.3; latin1 text so 8-bit bytes survive),
 * and decoding RFC 2047 encoded words in the values the door reads.
 */
import { headerEnd } from '../lib/header-section';

export { headerSection } from '../lib/header-section';

/** The raw values of every field named `lowerName` in a header section, in order, unfolded and trimmed (not decoded). */
export function fieldValues(section: Buffer, lowerName: string): string[] {
  const fields = section.toString('latin1').replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/);
  return fields.flatMap((f) => {
    const colon = f.indexOf(':');
    return colon > 0 && f.slice(0, colon).trim().toLowerCase() === lowerName ? [f.slice(colon + 1).trim()] : [];
  });
}

/** How many fields of each (lowercased) name a header section holds: one pass for every "at most once" rule. */
export function fieldCounts(section: Buffer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of section.toString('latin1').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || line.startsWith(' ') || line.startsWith('\t')) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/** Drops every field whose (case-insensitive) name makes `drop` true, with its continuations. */
export function stripHeaderFields(raw: Buffer, drop: (lowerName: string) => boolean): Buffer {
  const end = headerEnd(raw);
  const header = raw.subarray(0, end).toString('latin1');
  const lines = header.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  let kept = '';
  let dropping = false;
  let changed = false;
  for (const line of lines) {
    const continuation = line.startsWith(' ') || line.startsWith('\t');
    if (!continuation) {
      const colon = line.indexOf(':');
      const name = (colon === -1 ? line : line.slice(0, colon)).trim().toLowerCase();
      dropping = colon !== -1 && drop(name);
    }
    if (dropping) changed = true;
    else kept += line;
  }
  if (!changed) return raw;
  return Buffer.concat([Buffer.from(kept, 'latin1'), raw.subarray(end)]);
}

/** The fields the submission door removes: the platform's X-Svc-*, and Bcc and Resent-Bcc (RFC 5322 §3.6.3, §3.6.6: never delivered). */
export const isPrivateHeader = (lowerName: string): boolean => lowerName.startsWith('x-svc-') || lowerName === 'bcc' || lowerName === 'resent-bcc';

const encodedWord = /=\?([^?\s]+)\?([QqBb])\?([^?\s]*)\?=/g;

function decodeWord(charset: string, encoding: string, text: string): string {
  const bytes = encoding.toUpperCase() === 'B'
    ? Buffer.from(text, 'base64')
    : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  try {
    return new TextDecoder(charset.split('*')[0]).decode(bytes); // RFC 2231 `charset*lang`
  } catch {
    return bytes.toString('utf8'); // an unknown charset label: UTF-8 is the likeliest
  }
}

/**
 * Decodes RFC 2047 encoded words. mailparser does it only for the headers it knows, and
 * clients encode any non-ASCII value (nodemailer: `X-Svc-Category: =?UTF-8?Q?R=C3=A9union?=`).
 * Whitespace between two adjacent encoded words is dropped (RFC 2047 §6.2).
 */
export function decodeEncodedWords(value: string): string {
  return value
    .replace(/(\?=)\s+(?==\?[^?\s]+\?[QqBb]\?)/g, '$1')
    .replace(encodedWord, (_m, charset: string, encoding: string, text: string) => decodeWord(charset, encoding, text));
}
