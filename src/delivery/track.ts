/**
 * Per-recipient tracking of one outgoing copy: an open pixel in each html part, every http(s) link
 * rewritten to a signed click link, and the RFC 8058 List-Unsubscribe pair. Works on the spooled
 * bytes (mime.ts), so SMTP-submitted and API-assembled messages are treated alike.
 */
import { decodeHTMLAttribute } from 'entities';
import type { LinkBuilder } from '../tracking/links';
import { rewriteEntity } from './mime';
import { parseHeaderFields, splitMessage } from './sign';

/**
 * The URL a browser follows for an href: the attribute decoded as HTML does it (every character
 * reference, with the attribute rules for legacy ones such as "&copy=": entities, the parser
 * library htmlparser2 uses), then the WHATWG URL parser's own clean-up (tabs and newlines removed,
 * leading and trailing C0 controls and spaces trimmed). The click link redirects to exactly this.
 */
const hrefTarget = (value: string): string => trimC0(decodeHTMLAttribute(value).replace(/[\t\n\r]/g, ''));

/** Without leading and trailing C0 controls and spaces; by index (a regex for the tail backtracks on long runs). */
function trimC0(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return s.slice(start, end);
}
const encodeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/**
 * An <a> or <area> start tag (the clickable elements): its attributes up to the `>` that ends it,
 * a quoted value holding `>` included. No part crosses a `<`, and the alternatives start with
 * different characters, so the scan is linear in the html: a client's html runs through it on
 * the worker pool every door shares, and a backtracking pattern there held it for minutes.
 */
const anchorTag = /<(?:a|area)\b(?:[^<>"']|"[^"<]*"|'[^'<]*')*>/gi;

/**
 * One attribute of a start tag, as HTML's tokenizer reads it (WHATWG 13.2.5.32-38): a name, then
 * an optional value, double quoted, single quoted or unquoted. Anchored at `lastIndex` (sticky).
 */
const attribute = /[\s/]*([^\s/>][^\s/>=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?/y;

/**
 * The tag with its href (the first one, as HTML keeps the first of duplicates) rewritten by
 * `rewrite` when it is an http(s) URL; null when there is nothing to rewrite. Only the attribute
 * named href counts: data-href, or "href=" inside another attribute's value, is not a link.
 */
function rewriteHref(tag: string, rewrite: (target: string) => string | null): string | null {
  attribute.lastIndex = /^<\w+/.exec(tag)?.[0].length ?? tag.length; // past the element's name
  for (let m = attribute.exec(tag); m && m[0] !== ''; m = attribute.exec(tag)) {
    if (m[1].toLowerCase() !== 'href') continue;
    const value = m[2] ?? m[3] ?? m[4];
    if (value === undefined || !/^\s*https?:\/\//i.test(value)) return null;
    const replaced = rewrite(hrefTarget(value));
    if (replaced === null) return null;
    const start = m.index + m[0].length - (m[4] !== undefined ? value.length : value.length + 2);
    return `${tag.slice(0, start)}"${encodeAttr(replaced)}"${tag.slice(m.index + m[0].length)}`;
  }
  return null;
}

/**
 * The longest click link written: the HTTP door reads a request line and headers of up to 16 KB
 * (431 past it), and browsers and proxies commonly stop near 8 KB. A link whose tracked form
 * would be longer stays as the sender wrote it, untracked but working.
 */
const maxClickUrl = 8000;

/** Rewrites the links of one html document and adds the pixel before </body> (or at the end). */
export function trackHtml(html: string, mailId: string, links: LinkBuilder): string {
  const withLinks = html.replace(anchorTag, (tag: string) => rewriteHref(tag, (target) => {
    const click = links.click(mailId, target);
    return click.length > maxClickUrl ? null : click;
  }) ?? tag);
  const pixel = `<img src="${encodeAttr(links.open(mailId))}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`;
  let end = -1; // the last </body>, in one pass
  for (const m of withLinks.matchAll(/<\/body\s*>/gi)) end = m.index ?? end;
  return end < 0 ? withLinks + pixel : withLinks.slice(0, end) + pixel + withLinks.slice(end);
}

/**
 * Headers the platform writes at delivery (spec, send rule 2, beside Received); a value a client
 * sent (over SMTP: the HTTP door refuses them) is replaced, not doubled: a client's Sender would
 * show the recipient another author "on behalf of" the registered sender. Return-Path is written
 * by the final MTA from our envelope (RFC 5321 §4.4), so a client's would only lie about it (Postfix
 * drops it, with Content-Length, in message_drop_headers); the only DKIM-Signature is ours (compose),
 * and a client's would not verify on the tracked copy anyway.
 */
// Replaced by the platform's, or dropped as Postfix's message_drop_headers drops them (bcc,
// content-length, resent-bcc): a Resent-Bcc given as a custom header would show every recipient
// the hidden ones (the SMTP door already strips it at acceptance).
const managed = new Set(['list-unsubscribe', 'list-unsubscribe-post', 'sender', 'bounce-to', 'x-mailer', 'priority', 'return-path', 'content-length', 'dkim-signature', 'bcc', 'resent-bcc']);

export interface TrackOptions {
  mailId: string; links: LinkBuilder; unsubscribeMailto: string; trackHtml: boolean;
  /** The registered sender (Sender:) and the mail's return path (Bounce-To:); null: not written. */
  sender: string | null; returnPath: string;
}

/** The recipient's copy: tracked html, List-Unsubscribe headers first. Input and output are CRLF bytes. */
export function trackMessage(raw: Buffer, o: TrackOptions): Buffer {
  const { head, body } = splitMessage(raw);
  const rewritten = rewriteEntity(head, body.toString('latin1'), o.trackHtml ? (html) => trackHtml(html, o.mailId, o.links) : null);
  const parsed = parseHeaderFields(rewritten.head);
  const fields = parsed.filter((f) => !managed.has(f.name)).map((f) => f.text);
  // A rewritten part carries MIME fields (base64, charset); a message that had none must then
  // say it is MIME (RFC 2045 §4), as a client's plain message without MIME-Version may not.
  if (rewritten.head !== head && !parsed.some((f) => f.name === 'mime-version')) fields.push('MIME-Version: 1.0');
  const platform = [
    `List-Unsubscribe: <${o.links.unsubscribe(o.mailId)}>,\r\n <mailto:${o.unsubscribeMailto}?subject=unsubscribe>`,
    'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    // The header text is bytes read as latin1: an address with UTF-8 (RFC 6532) joins it as its bytes.
    ...(o.sender ? [`Sender: ${Buffer.from(o.sender, 'utf8').toString('latin1')}`] : []),
    `Bounce-To: ${o.returnPath}`,
    'X-Mailer: Estafeta',
    'Priority: normal',
  ];
  return Buffer.from(`${[...platform, ...fields].join('\r\n')}\r\n\r\n${rewritten.body}`, 'latin1');
}
