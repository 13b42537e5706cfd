/**
 * A minimal MIME walker that rewrites text/html leaves and leaves every other byte as it was
 * (SMTP-submitted messages keep their structure, attachments and signatures of parts), except a
 * leaf whose lines SMTP cannot carry, which goes in base64, and an 8-bit leaf, which goes in
 * 7 bits (quoted-printable text, base64 otherwise). Strings are latin1 so that one char =
 * one byte; only the html parts are decoded (any charset iconv-lite knows) and re-encoded as
 * UTF-8 base64.
 */
import iconv from 'iconv-lite';
import * as qp from 'nodemailer/lib/qp';
import { parseHeaderFields } from './sign';

type HtmlRewrite = (html: string) => string;

/** The value of header `name` (unfolded), or undefined. */
export function headerValue(head: string, name: string): string | undefined {
  const f = parseHeaderFields(head).find((h) => h.name === name);
  return f === undefined ? undefined : f.text.slice(f.text.indexOf(':') + 1).replace(/\r\n/g, '').trim();
}

function param(value: string, key: string): string | undefined {
  const m = new RegExp(`;\\s*${key}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return m ? (m[1] ?? m[2]) : undefined;
}

function decodeQp(s: string): string {
  return s.replace(/=\r\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** The leaf's bytes, transfer-decoded (base64, quoted-printable, or as they are). */
function decodedBody(head: string, body: string): Buffer {
  const cte = (headerValue(head, 'content-transfer-encoding') ?? '7bit').toLowerCase();
  return cte === 'base64' ? Buffer.from(body, 'base64') : Buffer.from(cte === 'quoted-printable' ? decodeQp(body) : body, 'latin1');
}

/** The longest line SMTP carries (RFC 5321 §4.5.3.1.6: 1000 octets with the CRLF). */
const maxLine = 998;

/** Whether a body cannot travel as it is: a line over 998 octets, or a NUL (RFC 5322 §2.3, RFC 6152). */
function untransportable(body: string): boolean {
  if (body.includes('\0')) return true;
  for (let at = 0; at < body.length;) {
    const end = body.indexOf('\r\n', at);
    if ((end < 0 ? body.length : end) - at > maxLine) return true;
    if (end < 0) break;
    at = end + 2;
  }
  return false;
}

/** Whether a body (latin1: one char per byte) holds an octet above 127. */
const eightBit = (body: string): boolean => /[\x80-\xff]/.test(body);

/** A leaf's head with its transfer encoding (and, when given, its type) replaced. */
function withEncoding(head: string, encoding: string, contentType?: string): string {
  const fields = parseHeaderFields(head)
    .filter((f) => f.name !== 'content-transfer-encoding' && (contentType === undefined || f.name !== 'content-type'))
    .map((f) => f.text);
  const typeField = contentType === undefined ? [] : [`Content-Type: ${contentType}`];
  return [...fields, ...typeField, `Content-Transfer-Encoding: ${encoding}`].join('\r\n');
}

/** A leaf's head with its transfer encoding replaced by base64, and its bytes in 76-column base64. */
function asBase64(head: string, bytes: Buffer, contentType?: string): { head: string; body: string } {
  return { head: withEncoding(head, 'base64', contentType), body: bytes.toString('base64').replace(/.{76}(?=.)/g, '$&\r\n') };
}

/** A text leaf in quoted-printable: its line breaks kept, so it stays readable. */
function asQuotedPrintable(head: string, bytes: Buffer): { head: string; body: string } {
  return { head: withEncoding(head, 'quoted-printable'), body: qp.wrap(qp.encode(bytes), 76) };
}

/**
 * Rewrites one leaf; returns the new head and body, or null when it stays as it is: tracked html
 * is rewritten, and a leaf that cannot travel as written (an SMTP client's 100,000-octet line or
 * NUL, which a strict MX refuses) is carried in base64, its content unchanged, where Postfix
 * would break its lines.
 */
function rewriteLeaf(head: string, body: string, rewrite: HtmlRewrite | null): { head: string; body: string } | null {
  const type = headerValue(head, 'content-type') ?? 'text/plain';
  const tracked = rewrite ? trackLeaf(head, body, type, rewrite) : null;
  if (tracked) return tracked;
  // A message/* part takes no transfer encoding but 7bit, 8bit or binary (RFC 2046 §5.2.1): it
  // leaves as written (the HTTP door refuses one that cannot travel).
  if (/^message\//i.test(type)) return null;
  if (untransportable(body)) return asBase64(head, decodedBody(head, body));
  // 8-bit content (an SMTP client's 8bit part) leaves in 7 bits: RFC 6376 §5.3 asks a signer to
  // convert before signing, since a hop that downgrades it later breaks the signature, and an MX
  // without 8BITMIME must not get 8-bit bytes (RFC 6152). Text in quoted-printable, as Postfix
  // downgrades it; anything else in base64.
  if (!eightBit(body)) return null;
  const bytes = decodedBody(head, body);
  return /^text\//i.test(type) ? asQuotedPrintable(head, bytes) : asBase64(head, bytes);
}

function trackLeaf(head: string, body: string, type: string, rewrite: HtmlRewrite): { head: string; body: string } | null {
  if (!/^text\/html\b/i.test(type)) return null;
  // An html file attached to the mail is the sender's document, delivered byte for byte: only
  // the message's own html body carries the pixel and tracked links.
  const disposition = headerValue(head, 'content-disposition') ?? '';
  if (/^attachment\b/i.test(disposition) || /;\s*filename\*?[0-9]*\*?\s*=/i.test(disposition) || /;\s*name\*?[0-9]*\*?\s*=/i.test(type)) return null;
  const charset = (param(type, 'charset') ?? 'utf-8').toLowerCase();
  // A charset iconv-lite does not know cannot be decoded safely: that part goes untracked, as is.
  if (!iconv.encodingExists(charset)) return null;
  // Re-encoded as UTF-8 (a rewritten link may hold characters the old charset lacks) and base64:
  // native and fast, and a rewritten line can exceed 998.
  const html = Buffer.from(rewrite(iconv.decode(decodedBody(head, body), charset)), 'utf8');
  const utf8Type = /;\s*charset\s*=/i.test(type) ? type.replace(/(;\s*charset\s*=\s*)(?:"[^"]*"|[^;\s]+)/i, '$1utf-8') : `${type}; charset=utf-8`;
  return asBase64(head, html, utf8Type);
}

/**
 * Rewrites the leaves of an entity (head without the blank line, body after it): the html ones
 * with `rewrite` (null: none tracked), and any that cannot travel as written (rewriteLeaf).
 */
export function rewriteEntity(givenHead: string, body: string, rewrite: HtmlRewrite | null, depth = 0): { head: string; body: string } {
  const head = foldLongLines(givenHead);
  const type = headerValue(head, 'content-type') ?? 'text/plain';
  if (/^message\/rfc822\b/i.test(type)) return rewriteEnclosed(head, body, depth) ?? rewriteLeaf(head, body, rewrite) ?? { head, body };
  if (!/^multipart\//i.test(type)) return rewriteLeaf(head, body, rewrite) ?? { head, body };
  const boundary = param(type, 'boundary');
  // Mail clients nest a few levels; a crafted message nested thousands deep would overflow the
  // stack (the attempt failing at every retry) after quadratic work: past the bound it goes as is.
  if (!boundary || depth >= maxMultipartDepth) return { head, body };
  const rewritten = rewriteMultipart(body, `--${boundary}`, rewrite, depth + 1);
  // A multipart's 8bit label declares what its parts hold (RFC 2045 §6.4): once they are all
  // 7-bit, a label left at 8bit would still make a strict hop treat the message as 8-bit.
  const cte = headerValue(head, 'content-transfer-encoding')?.toLowerCase();
  const relabel = (cte === '8bit' || cte === 'binary') && !eightBit(rewritten);
  return { head: relabel ? withEncoding(head, '7bit') : head, body: rewritten };
}

const maxMultipartDepth = 32;

/**
 * A header line SMTP cannot carry (over 998 octets: RFC 5322 §2.1.1, which an SMTP client's
 * message may hold) is folded before the last space or tab that lets it fit, else broken with
 * CRLF + space where it must be: what Postfix's smtp_line_length_limit does, before signing here
 * so the signature holds. Lines that fit are left as they are.
 */
function foldLongLines(head: string): string {
  if (head.length <= maxLine || !head.split('\r\n').some((l) => l.length > maxLine)) return head;
  return head.split('\r\n').map((line) => {
    const out: string[] = [];
    let rest = line;
    while (rest.length > maxLine) {
      const space = Math.max(rest.lastIndexOf(' ', maxLine), rest.lastIndexOf('\t', maxLine));
      const cut = space > 0 && rest.slice(0, space).trim() !== '' ? space : maxLine - 1;
      out.push(rest.slice(0, cut));
      rest = cut === space ? rest.slice(cut) : ` ${rest.slice(cut)}`;
    }
    out.push(rest);
    return out.join('\r\n');
  }).join('\r\n');
}

/**
 * A message/rfc822 part is a message: it takes no transfer encoding of its own (RFC 2046
 * §5.2.1), so what SMTP cannot carry in it (a line over 998 octets, a NUL, 8-bit bytes) is
 * converted inside it, leaf by leaf, as a downgrading MTA does (RFC 6152); its html is not
 * tracked (it is the enclosed mail's, not this one's). Null when its content has no header
 * section to read, or it nests too deep: the part then goes as it is.
 */
function rewriteEnclosed(head: string, body: string, depth: number): { head: string; body: string } | null {
  if (depth >= maxMultipartDepth) return null;
  const sep = body.startsWith('\r\n') ? 0 : body.indexOf('\r\n\r\n');
  if (sep < 0) return null;
  const inner = rewriteEntity(body.slice(0, sep), body.slice(sep === 0 ? 2 : sep + 4), null, depth + 1);
  const rewritten = `${inner.head}${inner.head ? '\r\n\r\n' : '\r\n'}${inner.body}`;
  const cte = headerValue(head, 'content-transfer-encoding')?.toLowerCase();
  const relabel = (cte === '8bit' || cte === 'binary') && !eightBit(rewritten) && !untransportable(rewritten);
  return { head: relabel ? withEncoding(head, '7bit') : head, body: rewritten };
}

function rewriteMultipart(body: string, delim: string, rewrite: HtmlRewrite | null, depth: number): string {
  // Delimiter lines start at the body start or after a CRLF (RFC 2046 §5.1.1).
  const starts: number[] = [];
  const first = body.indexOf(`\r\n${delim}`);
  let i = body.startsWith(delim) ? 0 : first < 0 ? -1 : first + 2;
  while (i >= 0) {
    starts.push(i);
    if (body.startsWith(`${delim}--`, i)) break;
    const next = body.indexOf(`\r\n${delim}`, i + delim.length);
    i = next < 0 ? -1 : next + 2;
  }
  if (starts.length < 2) return body;
  let out = body.slice(0, starts[0]);
  for (let k = 0; k < starts.length - 1; k++) {
    const lineEnd = body.indexOf('\r\n', starts[k]);
    out += body.slice(starts[k], lineEnd + 2);
    const part = body.slice(lineEnd + 2, starts[k + 1] - 2);
    const sep = part.startsWith('\r\n') ? 0 : part.indexOf('\r\n\r\n');
    if (sep < 0) {
      out += `${part}\r\n`;
      continue;
    }
    const r = rewriteEntity(part.slice(0, sep), part.slice(sep === 0 ? 2 : sep + 4), rewrite, depth);
    out += `${r.head}${r.head ? '\r\n\r\n' : '\r\n'}${r.body}\r\n`;
  }
  return out + body.slice(starts[starts.length - 1]);
}
