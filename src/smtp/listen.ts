/**
 * Binding an smtp-server and stopping it within the shutdown bound (CONTRACT §1), for every SMTP
 * listener of the process (submission, smtps, the inbound MX).
 */
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { completeReply } from './reply';
import { logReady, type Logger } from '../lib/log';

export interface Listener { name: string; port: number; close(): Promise<void> }

export const formatAddress = (a: AddressInfo): string => (a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`);

export async function listenSmtp(server: CompletingServer, o: { name: string; port: number; host: string; log: Logger; errorEvent: string }): Promise<Listener> {
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve(server.server.address() as AddressInfo);
    });
  });
  // Client-side trouble (resets, TLS failures) is reported here; it never ends the process.
  server.on('error', (err: Error) => o.log.debug({ event: o.errorEvent, listener: o.name, err }, 'SMTP connection error'));
  logReady(o.log, { listener: o.name, address: formatAddress(address) }, `${o.name} listening on ${formatAddress(address)}`);
  return { name: o.name, port: address.port, close: () => server.drain() };
}

type Connection = SMTPServer['connections'] extends Set<infer C> ? C : never;
/** smtp-server's own members this file relies on, absent from its types. */
type ConnectionInternals = Connection & { _onCommand(command: Buffer, callback?: () => void): void; _closed?: boolean; _closing?: boolean; _socket?: Socket };

const shuttingDown = '4.3.2 Service shutting down, retry later';
const inTransaction = (c: Connection): boolean => Boolean(c.session.envelope?.mailFrom);

/**
 * Every SMTP listener's server (submission, smtps, the inbound MX), adding two things to
 * smtp-server:
 * - Enhanced status codes. smtp-server runs with ENHANCEDSTATUSCODES hidden (it would derive
 *   codes from the number alone and double ours), so its own replies (syntax, sequence, limits)
 *   get theirs here: each new connection's send() completes the reply text before it is written
 *   (reply.ts completeReply).
 * - A graceful stop (CONTRACT §1: finish in-flight SMTP transactions). smtp-server's close()
 *   answers every later command 421, so a client between RCPT and DATA lost its transaction.
 *   drain() instead stops listening, tells sessions between transactions 421 at once, and lets a
 *   transaction under way (MAIL given) run to its final reply, after which the session is told
 *   421 too; at the shutdown bound (closeTimeout) whatever remains is closed.
 */
export class CompletingServer extends SMTPServer {
  private draining = false;

  override connect(...args: Parameters<SMTPServer['connect']>): void {
    super.connect(...args);
    let created: Connection | undefined;
    for (const c of this.connections) created = c; // a Set keeps insertion order: the last is new
    if (!created) return;
    const c = created as ConnectionInternals;
    const send = c.send.bind(c);
    let corked: Socket | null = null;
    const flush = (): void => {
      const socket = corked;
      corked = null;
      socket?.uncork();
    };
    c.send = (code, data, context) => {
      // Replies to a pipelined group (MAIL, RCPT, DATA: RFC 2920) leave in one write instead of
      // one each: the socket is corked from the first reply until the loop's check phase, after
      // every command of the chunk ran. Each write on loopback cost ~14 us of the loop and woke
      // the client once more. A 220 (the greeting, or STARTTLS's go-ahead, after which the
      // socket changes hands) is never held back.
      const socket = c._socket;
      if (code === 220) flush();
      else if (!corked && socket && !socket.destroyed) {
        corked = socket;
        socket.cork();
        setImmediate(flush);
      }
      send(code, typeof data === 'string' ? completeReply(code, data) : data, context);
      // A transaction's final reply is sent before smtp-server resets the session: look after it.
      if (this.draining) setImmediate(() => this.releaseIfIdle(c));
    };
    const onCommand = c._onCommand.bind(c);
    c._onCommand = (command, callback) => {
      if (this.draining && !inTransaction(c) && !/^QUIT\b/i.test(command.toString('latin1'))) return this.release(c);
      onCommand(command, callback);
    };
  }

  /**
   * Stops listening and resolves once every session has ended (see the class comment). A socket
   * still in its TLS handshake (implicit TLS) is not waited for and not destroyed: destroying one
   * mid-handshake crashed the process with SIGSEGV (smtp-server's own close() does, under our TLS
   * context), and it has no session to finish; it ends with the process.
   */
  drain(): Promise<void> {
    this.draining = true;
    this.server.close(); // stops accepting now; its callback would wait for those handshakes too
    for (const c of this.connections) this.releaseIfIdle(c);
    return new Promise<void>((resolve) => {
      const bound = setTimeout(() => {
        for (const c of this.connections) this.release(c);
      }, this.options.closeTimeout ?? 30_000);
      bound.unref();
      const ended = setInterval(() => {
        if (this.connections.size > 0) return;
        clearInterval(ended);
        clearTimeout(bound);
        resolve();
      }, 20);
    });
  }

  private releaseIfIdle(c: Connection): void {
    if (!inTransaction(c)) this.release(c);
  }

  private release(c: Connection): void {
    const internals = c as ConnectionInternals;
    if (internals._closed || internals._closing) return;
    c.send(421, shuttingDown);
    c.close();
  }
}
