/**
 * Assembles the RFC 5322 message once, at acceptance (nodemailer MailComposer): Message-ID at
 * the service's hostname and Date are set here. Bcc recipients are envelope only, never a header.
 * An SMTP submission keeps the client's bytes; only a missing Message-ID or Date is prepended.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import type { Recipient } from './types';
import type { NormalizedSubmission } from './validate';

export interface Envelope { msgId: string; hostname: string; at: number; senderName: string }

const address = (r: Recipient): Mail.Address => ({ address: r.email, name: r.name ?? '' });

export const messageIdOf = (e: Envelope): string => `<${e.msgId}@${e.hostname}>`;

export async function assemble(sub: NormalizedSubmission, e: Envelope): Promise<Buffer> {
  if (sub.raw) return completeRaw(sub.raw, e);
  const composer = new MailComposer({
    from: { address: sub.senderEmail, name: e.senderName },
    to: sub.to.map(address),
    cc: sub.cc.length ? sub.cc.map(address) : undefined,
    replyTo: sub.replyTo ? address(sub.replyTo) : undefined,
    subject: sub.subject ?? '',
    html: sub.html ?? undefined,
    text: sub.text ?? undefined,
    headers: sub.headers,
    attachments: sub.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
    messageId: messageIdOf(e),
    date: new Date(e.at),
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile().build();
}

function completeRaw(raw: Buffer, e: Envelope): Buffer {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end === -1 ? raw.length : end).toString('latin1');
  const add: string[] = [];
  if (!/^message-id:/im.test(head)) add.push(`Message-ID: ${messageIdOf(e)}`);
  if (!/^date:/im.test(head)) add.push(`Date: ${new Date(e.at).toUTCString().replace('GMT', '+0000')}`);
  return add.length ? Buffer.concat([Buffer.from(add.join('\r\n') + '\r\n'), raw]) : raw;
}
