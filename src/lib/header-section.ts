/**
 * Where a message's header section ends (RFC 5322 §2.1), for CRLF and bare-LF messages alike:
 * an SMTP client's bytes may use either, and a search for CRLF CRLF alone reads into the body.
 */

/** Offset of the blank line that ends the header section (the body starts after it). */
export function headerEnd(raw: Buffer): number {
  let pos = 0;
  while (pos < raw.length) {
    const nl = raw.indexOf(0x0a, pos);
    if (nl === -1) return raw.length; // no body at all: everything is header
    const empty = nl === pos || (nl === pos + 1 && raw[pos] === 0x0d);
    if (empty) return pos;
    pos = nl + 1;
  }
  return raw.length;
}

/** The header section with the blank line that ends it (the whole message when it has no body). */
export function headerSection(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  if (end >= raw.length) return raw;
  return raw.subarray(0, raw.indexOf(0x0a, end) + 1);
}

/**
 * Bare LF and lone CR become CRLF: SMTP, DKIM and every header check speak CRLF lines. A lone CR
 * left in a header would pass the checks as part of one line and leave as a line break (SMTP
 * clients write it as CRLF): the submission door normalizes before it reads a header. One pass
 * over the bytes; a message already in CRLF is returned as it is, without a copy.
 */
export function toCrlf(raw: Buffer): Buffer {
  let bare = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0x0d) {
      if (raw[i + 1] === 0x0a) i++;
      else bare++;
    } else if (c === 0x0a) bare++;
  }
  if (bare === 0) return raw;
  const out = Buffer.allocUnsafe(raw.length + bare);
  let o = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0x0d || c === 0x0a) {
      out[o++] = 0x0d;
      out[o++] = 0x0a;
      if (c === 0x0d && raw[i + 1] === 0x0a) i++;
    } else out[o++] = c;
  }
  return out;
}

/** Runs of spaces and tabs longer than this are cut to it in what mailparser reads. */
const longestRun = 16;
const longRun = new RegExp(`[ \\t]{${longestRun + 1},}`, 'g');

/**
 * The bytes mailparser is given, from `from` on (the body, where parts are decoded), with every
 * run of spaces and tabs longer than 16 cut to 16: its quoted-printable decoding backtracks on a
 * long run (40,000 spaces held the event loop 2.7 s, growing with the square). What the doors read
 * a message for (its structure, attachments and their sizes, report fields, links) does not depend
 * on such runs; the stored bytes are the client's own. A message without one is not copied.
 */
export function cutSpaceRuns(raw: Buffer, from = 0): Buffer {
  let run = 0;
  let found = false;
  for (let i = from; i < raw.length && !found; i++) {
    run = raw[i] === 0x20 || raw[i] === 0x09 ? run + 1 : 0;
    found = run > longestRun;
  }
  if (!found) return raw;
  const tail = raw.subarray(from).toString('latin1').replace(longRun, ' '.repeat(longestRun));
  return Buffer.concat([raw.subarray(0, from), Buffer.from(tail, 'latin1')]);
}
