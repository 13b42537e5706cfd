/**
 * DKIM signing (RFC 6376), rsa-sha256, relaxed/relaxed, by the sender domain's active key. Written
 * on node:crypto rather than a library signer so that keys stay parsed KeyObjects (cached by key
 * id: re-parsing PEM per message costs twice the signature) and the message is hashed once, in
 * memory. Verified in tests with mailauth against the published keys.
 */
import crypto from 'node:crypto';

/** What the signature covers (issue 5): the identity headers, the unsubscribe pair, the MIME headers. */
export const signedHeaders = [
  'from', 'to', 'cc', 'reply-to', 'subject', 'date', 'message-id', 'in-reply-to', 'references',
  'list-unsubscribe', 'list-unsubscribe-post', 'mime-version', 'content-type', 'content-transfer-encoding',
] as const;

export interface SigningKey { id: number; domain: string; selector: string; pem: string }

const keyCache = new Map<number, { pem: string; key: crypto.KeyObject }>();

function keyObject(k: SigningKey): crypto.KeyObject {
  const hit = keyCache.get(k.id);
  // A rotation rewrites the row's PEM under the same id: compare, never serve a stale key.
  if (hit && hit.pem === k.pem) return hit.key;
  const key = crypto.createPrivateKey(k.pem);
  if (keyCache.size > 10_000) keyCache.clear();
  keyCache.set(k.id, { pem: k.pem, key });
  return key;
}

/** Splits a CRLF message into its header block (without the blank line) and its body. */
export function splitMessage(raw: Buffer): { head: string; body: Buffer } {
  const i = raw.indexOf('\r\n\r\n');
  if (i < 0) return { head: raw.toString('latin1').replace(/\r\n$/, ''), body: Buffer.alloc(0) };
  return { head: raw.subarray(0, i).toString('latin1'), body: raw.subarray(i + 4) };
}

/** Header fields in order, each with its original text (folding kept), latin1 = bytes as-is. */
export function parseHeaderFields(head: string): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && out.length) out[out.length - 1].text += `\r\n${line}`;
    else if (line.length) out.push({ name: line.slice(0, Math.max(line.indexOf(':'), 0)).trim().toLowerCase(), text: line });
  }
  return out;
}

/** RFC 6376 §3.4.2 relaxed header canonicalization, without the trailing CRLF. */
export function relaxedHeader(text: string): string {
  const colon = text.indexOf(':');
  const name = text.slice(0, colon).trim().toLowerCase();
  const value = text.slice(colon + 1).replace(/\r\n/g, '').replace(/[ \t]+/g, ' ').trim();
  return `${name}:${value}`;
}

/** RFC 6376 §3.4.4 relaxed body canonicalization. */
export function relaxedBody(body: Buffer): Buffer {
  const lines = body.toString('latin1').split('\r\n').map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return Buffer.from(lines.length ? `${lines.join('\r\n')}\r\n` : '', 'latin1');
}

/** Returns the DKIM-Signature header field (with its CRLF) to prepend to the message. */
export function dkimSignature(raw: Buffer, key: SigningKey, at: number = Date.now()): string {
  const { head, body } = splitMessage(raw);
  const bh = crypto.createHash('sha256').update(relaxedBody(body)).digest('base64');
  const fields = parseHeaderFields(head);
  const used = new Set<number>();
  const picked: string[] = [];
  const names: string[] = [];
  // For a name listed once, the bottom-most instance is signed (§5.4.2).
  for (const name of signedHeaders) {
    for (let i = fields.length - 1; i >= 0; i--) {
      if (fields[i].name === name && !used.has(i)) {
        used.add(i);
        picked.push(relaxedHeader(fields[i].text));
        names.push(name);
        break;
      }
    }
  }
  const value = `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domain}; s=${key.selector};\r\n\tt=${Math.floor(at / 1000)}; h=${names.join(':')};\r\n\tbh=${bh};\r\n\tb=`;
  const field = `DKIM-Signature: ${value}`;
  const data = `${picked.join('\r\n')}\r\n${relaxedHeader(field)}`;
  const b = crypto.sign('sha256', Buffer.from(data, 'latin1'), keyObject(key)).toString('base64');
  return `${field}${b.replace(/(.{72})/g, '$1\r\n\t').replace(/\r\n\t$/, '')}\r\n`;
}
