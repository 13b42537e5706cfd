/**
 * Signed tracking links under ESTAFETA_PUBLIC_URL: open pixel, click redirect, unsubscribe. The
 * HMAC key lives in the data dir (tracking.key, created once), so links stay valid across
 * restarts and cannot be forged: a click link redirects only to the URL signed for that mail.
 *
 *   open         /t/o/<mail_id>/<sig>.gif
 *   click        /t/c/<mail_id>/<sig>?u=<original url>
 *   unsubscribe  /t/u/<mail_id>/<sig>          (GET: confirmation page, POST: RFC 8058 one-click)
 *   mailboxes    bounces+<mail_id>.<sig>@<sender domain>, unsubscribe+<mail_id>.<sig>@<hostname>
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export type LinkKind = 'o' | 'c' | 'u';

const secrets = new Map<string, Buffer>();

/** The data dir's tracking key; written atomically on first use (two processes may race). */
export function trackingSecret(dataDir: string): Buffer {
  const hit = secrets.get(dataDir);
  if (hit) return hit;
  const file = path.join(dataDir, 'tracking.key');
  if (!fs.existsSync(file)) {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, crypto.randomBytes(32).toString('base64'), { mode: 0o600 });
    try {
      fs.linkSync(tmp, file); // fails if another process won the race: then its key is the key
    } catch {
      // keep the existing key
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  secrets.set(dataDir, key);
  return key;
}

export function linkSignature(secret: Buffer, kind: LinkKind, mailId: string, url = ''): string {
  return crypto.createHmac('sha256', secret).update(`${kind}\n${mailId}\n${url}`).digest('base64url').slice(0, 22);
}

export function verifyLink(secret: Buffer, kind: LinkKind, mailId: string, sig: string, url = ''): boolean {
  const expected = Buffer.from(linkSignature(secret, kind, mailId, url));
  const given = Buffer.from(sig);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/**
 * The platform's per-mail mailboxes carry `<mail_id>.<sig>` in their local part: the VERP return
 * path `bounces+…@<sender domain>` and the List-Unsubscribe mailto `unsubscribe+…@<hostname>`.
 * Signed like the links, or anyone who knows a mail id could bounce or unsubscribe its recipient
 * by mail. Lowercase hex, as some relays fold the case of a local part.
 */
export type MailboxKind = 'bounces' | 'unsubscribe';

export function mailbox(secret: Buffer, kind: MailboxKind, mailId: string, domain: string): string {
  return `${kind}+${mailId}.${mailboxSignature(secret, kind, mailId)}@${domain}`;
}

const mailboxSignature = (secret: Buffer, kind: MailboxKind, mailId: string): string =>
  crypto.createHmac('sha256', secret).update(`${kind}\n${mailId}`).digest('hex').slice(0, 20);

/** The mail id a signed local-part tail (`<mail_id>.<sig>`) of that kind names, or null. */
export function verifyMailbox(secret: Buffer, kind: MailboxKind, tail: string): string | null {
  const dot = tail.lastIndexOf('.');
  if (dot <= 0) return null;
  const mailId = tail.slice(0, dot).toLowerCase(); // ids are lowercase base32 (accept/ids.ts)
  const expected = Buffer.from(mailboxSignature(secret, kind, mailId));
  const given = Buffer.from(tail.slice(dot + 1).toLowerCase());
  return given.length === expected.length && crypto.timingSafeEqual(given, expected) ? mailId : null;
}

export interface LinkBuilder {
  open(mailId: string): string;
  click(mailId: string, url: string): string;
  unsubscribe(mailId: string): string;
}

export function linkBuilder(publicUrl: string, secret: Buffer): LinkBuilder {
  const base = publicUrl.replace(/\/+$/, '');
  const id = encodeURIComponent;
  return {
    open: (m) => `${base}/t/o/${id(m)}/${linkSignature(secret, 'o', m)}.gif`,
    click: (m, url) => `${base}/t/c/${id(m)}/${linkSignature(secret, 'c', m, url)}?u=${encodeURIComponent(url)}`,
    unsubscribe: (m) => `${base}/t/u/${id(m)}/${linkSignature(secret, 'u', m)}`,
  };
}
