/**
 * The SMTP client: the only module that opens outgoing SMTP connections. One nodemailer pool per
 * (address, port, credentials), so consecutive mails to the same host reuse its connections; EHLO
 * ESTAFETA_HOSTNAME; opportunistic STARTTLS (certificate not checked: any TLS beats none, RFC 7435):
 * a refused STARTTLS goes on in clear text (nodemailer's opportunisticTLS), and a handshake that
 * fails is retried once in clear text, as Postfix's smtp_tls_security_level=may does. Idle pools
 * close after 30 s.
 */
import net from 'node:net';
import { isAscii } from 'node:buffer';
import nodemailer, { type Transporter } from 'nodemailer';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type Mail from 'nodemailer/lib/mailer';
import type { Hop } from './route';
import { classifyError, classifyReply, type Outcome } from './outcome';

export interface Envelope { from: string; to: string }
export interface Transport {
  /** The remote verdict; throws NotStarted once drain() was called and no connection took the mail. */
  send(hop: Hop, envelope: Envelope, raw: Buffer): Promise<Outcome>;
  /**
   * A graceful stop (CONTRACT §1: finish the attempts in flight): idle connections close, a
   * delivery under way on a connection finishes, and a send still waiting for a connection
   * (several destinations share an MX host, and its pool's connection limit) is not started.
   */
  drain(): void;
  close(): void;
}

/** A send the stop came before: no server saw it, so it has no outcome (its claim makes it due at the next start). */
export class NotStarted extends Error {}

interface Pool { mailer: Transporter<SMTPPool.SentMessageInfo>; lastUsed: number; active: number }

export interface TransportOptions { hostname: string; maxConnections: number; idleMs?: number }

/**
 * A connection lost to TLS rather than to the host: nodemailer reports a handshake it could not
 * start as ETLS and one the peer broke (a server answering 220 to STARTTLS and then no TLS) as
 * a socket error carrying OpenSSL's words.
 */
export function tlsHandshakeFailure(response: string): boolean {
  return /^ETLS\b/.test(response) || (/^ESOCKET\b/.test(response) && /\b(SSL|TLS)\b|ssl3?_|tls_|handshake/i.test(response));
}

/** The outcome of a transaction the client library reports as done, from the host's final reply. */
function accepted(reply: unknown): Outcome {
  const response = String(reply ?? '250 OK');
  return classifyReply(Number(/^\d{3}/.exec(response)?.[0] ?? 250), response, 'message');
}

/** How long a one-off connection waits for the answer to its QUIT before closing anyway. */
const quitWaitMs = 2000;

export function createTransport(o: TransportOptions): Transport {
  const pools = new Map<string, Pool>();
  const idleMs = o.idleMs ?? 30_000;
  let draining = false;

  /** What every connection to a hop is opened with, pooled or not. */
  const connectionOptions = (hop: Hop, plain: boolean): SMTPConnection.Options & { auth?: Hop['auth'] } => ({
    host: hop.address, port: hop.port, secure: hop.secure, name: o.hostname, ignoreTLS: plain, opportunisticTLS: !hop.secure,
    tls: { rejectUnauthorized: false, ...(net.isIP(hop.host) ? {} : { servername: hop.host }) },
    auth: hop.auth, connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 120_000, logger: false,
  });

  function pool(hop: Hop, plain: boolean): Pool {
    if (draining) throw new NotStarted('stopping: no new delivery is started');
    const key = `${hop.address}|${hop.port}|${hop.secure}|${hop.auth?.user ?? ''}|${plain}`;
    let p = pools.get(key);
    if (!p) {
      const options = { pool: true, maxConnections: o.maxConnections, maxMessages: Infinity, ...connectionOptions(hop, plain) } as SMTPPool.Options;
      p = { mailer: nodemailer.createTransport(options), lastUsed: Date.now(), active: 0 };
      pools.set(key, p);
    }
    return p;
  }

  async function sendVia(p: Pool, envelope: Envelope, raw: Buffer): Promise<Outcome> {
    p.active++;
    try {
      // RFC 6152: a body with 8-bit bytes (an SMTP client's 8bit part, raw UTF-8 headers) is
      // announced as BODY=8BITMIME where the MX offers it; API-built messages are 7-bit.
      const use8BitMime = !isAscii(raw);
      const info = await p.mailer.sendMail({ envelope: { from: envelope.from, to: [envelope.to], use8BitMime } as Mail.Options['envelope'], raw });
      return accepted(info.response);
    } catch (err) {
      // A closed pool fails what waited in its queue before any connection took it.
      if (draining && err instanceof Error && err.message === 'Connection pool was closed') throw new NotStarted(err.message);
      return classifyError(err);
    } finally {
      p.active--;
      p.lastUsed = Date.now();
    }
  }

  /**
   * RFC 6531 §3.4: a UTF-8 address goes only to a host that offers SMTPUTF8. nodemailer adds the
   * parameter where the host offers it, but its pool says nothing of the host's extensions and
   * sends without it where it does not; so such an envelope (rare) takes a connection of its own,
   * whose EHLO reply is read before MAIL. A host without SMTPUTF8 bounces the mail 5.6.7, as
   * Postfix does ("SMTPUTF8 is required, but was not offered by host"), without restricting the
   * address: the host, not the recipient, is what failed.
   */
  async function sendUtf8(hop: Hop, plain: boolean, envelope: Envelope, raw: Buffer): Promise<Outcome> {
    if (draining) throw new NotStarted('stopping: no new delivery is started');
    const { auth, ...options } = connectionOptions(hop, plain);
    const conn = new SMTPConnection(options);
    let failed: ((err: Error) => void) | null = null;
    // smtp-connection reports a broken socket as an event (unhandled, it would end the process).
    conn.on('error', (err: Error) => failed?.(err));
    const step = <T>(run: (done: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> => new Promise<T>((resolve, reject) => {
      failed = reject;
      conn.once('end', () => reject(Object.assign(new Error('Connection closed'), { code: 'ECONNECTION' })));
      run((err, value) => (err ? reject(err) : resolve(value as T)));
    });
    try {
      await step<void>((done) => conn.connect(() => done(null)));
      if (auth) await step<void>((done) => conn.login(auth as SMTPConnection.Credentials, (err) => done(err)));
      // EHLO's extensions (smtp-connection keeps them on the instance; no accessor is published).
      const offered = (conn as unknown as { _supportedExtensions?: string[] })._supportedExtensions ?? [];
      if (!offered.includes('SMTPUTF8')) {
        return { kind: 'bounced', scope: 'message', restrict: false, response: `550 5.6.7 SMTPUTF8 is required, but was not offered by host ${hop.host}` };
      }
      const info = await step<SMTPConnection.SentMessageInfo>((done) => conn.send({ from: envelope.from, to: [envelope.to], use8BitMime: !isAscii(raw) } as SMTPConnection.Envelope, raw, done));
      return accepted(info.response);
    } catch (err) {
      return classifyError(err);
    } finally {
      conn.removeAllListeners('end');
      // QUIT is a courtesy: a host that never answers it must not keep a socket per mail open
      // until the socket timeout (the attempt, and its concurrency slot, are over).
      const closing = setTimeout(() => conn.close(), quitWaitMs);
      closing.unref();
      conn.once('end', () => clearTimeout(closing));
      conn.quit();
    }
  }

  const sweep = setInterval(() => {
    const cutoff = Date.now() - idleMs;
    for (const [key, p] of pools) {
      if (p.active === 0 && p.lastUsed < cutoff) {
        p.mailer.close();
        pools.delete(key);
      }
    }
  }, Math.min(idleMs, 15_000));
  sweep.unref();

  const drain = (): void => {
    draining = true;
    for (const p of pools.values()) p.mailer.close();
  };

  return {
    async send(hop, envelope, raw) {
      const utf8 = /[^\x00-\x7f]/.test(envelope.from + envelope.to);
      const via = (plain: boolean): Promise<Outcome> => (utf8 ? sendUtf8(hop, plain, envelope, raw) : sendVia(pool(hop, plain), envelope, raw));
      const outcome = await via(false);
      const tlsFailed = outcome.kind === 'deferred' && outcome.scope === 'site' && tlsHandshakeFailure(outcome.response);
      if (!tlsFailed || hop.secure) return outcome;
      return via(true);
    },
    drain,
    close() {
      drain();
      clearInterval(sweep);
      pools.clear();
    },
  };
}
