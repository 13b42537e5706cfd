/**
 * The recipient's copy from the spooled bytes: tracking (pixel, links, List-Unsubscribe), the
 * platform's Received line, then the DKIM signature over the final headers. Pure CPU, so it can run in a worker thread.
 */
import { linkBuilder, mailbox, type LinkBuilder } from '../tracking/links';
import { dkimSignature, type SigningKey } from './sign';
import { trackMessage } from './track';
import { toCrlf } from '../lib/header-section';

/**
 * `received`: the platform's trace header line(s), CRLF-ended, put on top of the copy; `sender`
 * and `returnPath`: the registered sender and the envelope sender, written as Sender and Bounce-To.
 */
export interface ComposeJob {
  raw: Buffer; mailId: string; publicUrl: string; secret: Buffer; hostname: string; key: SigningKey | null; received?: string;
  sender: string | null; returnPath: string;
}

const builders = new Map<string, LinkBuilder>();

function links(publicUrl: string, secret: Buffer): LinkBuilder {
  const id = `${publicUrl}\n${secret.toString('base64')}`;
  let b = builders.get(id);
  if (!b) builders.set(id, (b = linkBuilder(publicUrl, secret)));
  return b;
}

export function composeBytes(job: ComposeJob): Buffer {
  const body = trackMessage(toCrlf(job.raw), {
    mailId: job.mailId, links: links(job.publicUrl, job.secret), trackHtml: true, unsubscribeMailto: mailbox(job.secret, 'unsubscribe', job.mailId, job.hostname),
    sender: job.sender, returnPath: job.returnPath,
  });
  const tracked = job.received ? Buffer.concat([Buffer.from(job.received, 'utf8'), body]) : body;
  if (!job.key) return tracked;
  return Buffer.concat([Buffer.from(dkimSignature(tracked, job.key), 'latin1'), tracked]);
}
