/**
 * THE way in (= Postfix cleanup): validate → policy → assemble → spool + store → acknowledge.
 * Both doors call submit(); every rule of the spec is applied here once (DESIGN.md rule 1), and
 * submit resolves only after the group commit made the message durable (rule 2).
 */
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Spool } from '../spool/spool';
import type { WorkerPool } from '../lib/worker-pool';
import type { Accept, AcceptResult, Submission } from './types';
import { ServiceError } from '../errors';
import type { Metrics } from '../lib/metrics';
import { getInstance, type InstanceRow } from '../store/instances';
import { readFresh } from '../store/fresh';
import { domainOf, isSandboxDomain, sandboxCapture } from '../lib/address';
import { now } from '../lib/time';
import { checkSubmission, limits } from './validate';
import { checkPlan, materializeTemplate, resolveSender } from './policy';
import { dropReasons } from './drops';
import { assemble } from './assemble';
import { createBandwidth } from './bandwidth';
import { createCommitter, type Acceptance } from './enqueue';
import { newMailId, newMsgId } from './ids';
import { startPurge } from './purge';

export interface AcceptDeps {
  db: Db; config: Readonly<Config>; log: Logger; spool: Spool; onQueued: () => void;
  metrics?: Pick<Metrics, 'acceptedMessages' | 'acceptedRecipients'>;
  /** Where the MIME of a send is built (assemble.ts), off the event loop. */
  workers: WorkerPool;
}

export function createAccept(deps: AcceptDeps): Accept {
  const { db, config, log, workers } = deps;
  const committer = createCommitter(deps);
  const bandwidth = createBandwidth();
  startPurge({ db, spool: deps.spool, log });

  const { metrics } = deps;
  const submit = async (given: InstanceRow, submission: Submission): Promise<AcceptResult> => {
    const at = now();
    // Limits are read on every send through the fresh cache (store/fresh.ts): `instance limits`
    // by the CLI invalidates it, so it acts on the next request.
    const instance = readFresh(db, `instance:${given.id}`, () => getInstance(db, given.id)) ?? given;
    let sub = checkSubmission(submission);
    const sender = resolveSender(db, instance.id, sub);
    sub = materializeTemplate(db, instance.id, sub);
    const drops = dropReasons(db, instance, sender.row, sub);
    const charged = drops.filter((d) => d === null).length;
    const cycle = checkPlan(db, instance, charged, at);

    const msgId = newMsgId(at);
    const bytes = await assemble(sub, { msgId, hostname: config.hostname, at, senderName: sender.row.name }, workers);
    // Over SMTP the limit is the client's message, checked by the door on the bytes it received
    // (CONTRACT §4, RFC 1870 SIZE): a message of exactly 15 MB stays acceptable when the platform
    // adds the Date and Message-ID it lacked.
    if (sub.door === 'http' && bytes.length > limits.messageBytes) {
      throw new ServiceError('request_too_large', `The assembled message is ${bytes.length} bytes; the maximum is ${limits.messageBytes}.`, { max_bytes: limits.messageBytes });
    }
    bandwidth.take(instance, bytes.length, now());

    const subject = sub.subject ?? '';
    const mails: Acceptance['mails'] = sub.recipients.map((r, i) => {
      const drop = drops[i];
      const rcptDomain = domainOf(r.email);
      const received = { at, event: 'received', status: 1, detail: `accepted over ${sub.door}${sub.testMode ? ' (test mode)' : ''}` };
      const row = {
        mailId: newMailId(at), msgId, rcpt: r.email, rcptDomain, rcptKind: r.kind, subject,
        senderId: sender.row.id, senderEmail: sender.row.email_address, customMsgId: sub.customMsgId, customGroupCode: sub.customGroupCode,
        charged: !drop, receivedAt: at,
      };
      if (drop) {
        return { row: { ...row, status: 4, nextAttemptAt: null, queuedAt: null, sentAt: null, finalAt: at }, logs: [received, { at, event: 'dropped', status: 4, detail: drop }] };
      }
      const queued = { at, event: 'queued', status: 2, detail: null };
      // A sandbox recipient is never relayed (CONTRACT §5): its capture needs nothing the delivery
      // loop has, so it is written here, in the same transaction, instead of by a later scan, claim
      // and outcome transaction (the last checks of delivery, suppression and the attachment
      // limit, were made above by dropReasons in this same request).
      if (isSandboxDomain(rcptDomain)) {
        return {
          row: { ...row, status: 3, nextAttemptAt: null, queuedAt: at, sentAt: at, finalAt: at },
          logs: [received, queued, { at, event: 'sent', status: 3, detail: sandboxCapture.detail, response: sandboxCapture.response }],
        };
      }
      return { row: { ...row, status: 2, nextAttemptAt: at, queuedAt: at, sentAt: null, finalAt: null }, logs: [received, queued] };
    });
    // Recipients left for the delivery loop: neither dropped nor captured.
    const pending = mails.filter((m) => m.row.status === 2).length;
    const acceptance: Acceptance = {
      instance, bytes, charged, cycle, mails,
      message: {
        msgId, senderId: sender.row.id, senderEmail: sender.row.email_address, envelopeFrom: null, subject,
        size: bytes.length, attachmentBytes: sub.attachmentBytes, category: sub.categorySlug, customMsgId: sub.customMsgId,
        customGroupCode: sub.customGroupCode, testMode: sub.testMode, door: sub.door, pending, receivedAt: at,
      },
    };
    try {
      await committer.commit(acceptance);
    } catch (err) {
      bandwidth.refund(instance, bytes.length);
      if (err instanceof ServiceError) throw err;
      log.error({ err, event: 'accept.commit_failed', instance: instance.slug, msg_id: msgId }, 'could not store an accepted message');
      throw new ServiceError('service_unavailable', 'The message could not be stored; retry.');
    }
    log.debug({ event: 'accept.queued', instance: instance.slug, msg_id: msgId, recipients: mails.length, charged }, 'accepted');
    if (metrics) {
      metrics.acceptedMessages.inc({ door: sub.door });
      for (const m of mails) metrics.acceptedRecipients.inc({ door: sub.door, result: m.row.status === 2 ? 'queued' : m.row.status === 3 ? 'captured' : 'dropped' });
    }
    return { msgId, mailIds: mails.map((m) => m.row.mailId) };
  };

  return { submit };
}
