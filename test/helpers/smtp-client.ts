/**
 * SMTP clients for tests: nodemailer's SMTPConnection, promisified (the client the issue names),
 * and a minimal line client for the exchanges nodemailer hides (EHLO lists, exact replies).
 */
import net from 'node:net';
import tls from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { TapLike } from './service';

export type SmtpError = Error & { responseCode?: number; response?: string; code?: string; command?: string };

export interface Client {
  conn: SMTPConnection;
  login: (user: string, pass: string) => Promise<SmtpError | null>;
  send: (from: string, to: string[], message: string | Buffer) => Promise<{ err: SmtpError | null; info?: SMTPConnection.SentMessageInfo }>;
  close: () => void;
}

/** Connects (STARTTLS when offered, unless ignoreTLS) and reads the greeting and EHLO. */
export async function smtpConnect(t: TapLike, port: number, opts: SMTPConnection.Options = {}): Promise<Client> {
  const conn = new SMTPConnection({ host: '127.0.0.1', port, tls: { rejectUnauthorized: false }, ...opts });
  conn.on('error', () => undefined); // failures are asserted through the callbacks
  t.teardown(() => conn.close());
  await new Promise<void>((resolve, reject) => conn.connect((err) => (err ? reject(err) : resolve())));
  return {
    conn,
    login: (user, pass) => new Promise((resolve) => conn.login({ user, pass }, (err) => resolve(err ?? null))),
    send: (from, to, message) =>
      new Promise((resolve) => conn.send({ from, to }, message, (err, info) => resolve({ err: err ?? null, info: info ?? undefined }))),
    close: () => conn.close(),
  };
}

export interface LineClient {
  /** Sends one command line and resolves with the whole (possibly multi-line) reply. */
  cmd: (line: string) => Promise<string>;
  /** Writes bytes without waiting for a reply (message data). */
  write: (text: string) => void;
  /** Waits for the next reply without sending anything (unsolicited replies such as 421). */
  read: () => Promise<string>;
  /** Upgrades the connection with STARTTLS. */
  starttls: () => Promise<void>;
  /** SHA-256 fingerprint of the certificate the server presented, once TLS runs. */
  peerFingerprint: () => string | null;
  close: () => void;
}

/** A bare SMTP client on a socket: replies are returned verbatim (lines joined by \n). */
export async function lineClient(t: TapLike, port: number, secure = false): Promise<LineClient & { greeting: string }> {
  let socket: net.Socket = secure ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : net.connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let buffer = '';
  let waiting: ((reply: string) => void) | null = null;
  const onData = (d: Buffer): void => {
    buffer += d.toString('utf8');
    // A reply ends with a line whose fourth character is a space (RFC 5321 §4.2.1).
    const m = /(^|\r\n)\d{3} [^\r\n]*\r\n$/.exec(buffer);
    if (m && waiting) {
      const reply = buffer.replace(/\r\n$/, '').split('\r\n').join('\n');
      buffer = '';
      const w = waiting;
      waiting = null;
      w(reply);
    }
  };
  const next = (): Promise<string> => new Promise((resolve) => {
    waiting = resolve;
    onData(Buffer.alloc(0));
  });
  socket.on('data', onData);
  socket.on('error', () => undefined);
  const greeting = await next();
  const cmd = (line: string): Promise<string> => {
    const p = next();
    socket.write(`${line}\r\n`);
    return p;
  };
  const starttls = async (): Promise<void> => {
    const reply = await cmd('STARTTLS');
    if (!reply.startsWith('220')) throw new Error(`STARTTLS refused: ${reply}`);
    socket.off('data', onData);
    socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({ socket, rejectUnauthorized: false }, () => resolve(s));
      s.once('error', reject);
    });
    socket.on('data', onData);
    socket.on('error', () => undefined);
  };
  const peerFingerprint = (): string | null => (socket instanceof tls.TLSSocket ? socket.getPeerCertificate().fingerprint256 : null);
  const write = (text: string): void => {
    socket.write(text);
  };
  return { greeting, cmd, write, read: next, starttls, peerFingerprint, close: () => socket.destroy() };
}
