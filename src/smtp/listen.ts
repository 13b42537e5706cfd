/**
 * Binding an smtp-server and stopping it within the shutdown bound (CONTRACT §1), for every SMTP
 * listener of the process (submission, smtps, the inbound MX).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { completeReply } from './reply';
import { logReady, type Logger } from '../lib/log';

export interface Listener { name: string; port: number; close(): Promise<void> }

export const formatAddress = (a: AddressInfo): string => (a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`);

export async function listenSmtp(server: SMTPServer, o: { name: string; port: number; host: string; log: Logger; errorEvent: string }): Promise<Listener> {
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
  return {
    name: o.name,
    port: address.port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Sessions between transactions are told at once instead of holding the stop for the
      // server's closeTimeout; one with a transaction under way (MAIL given) finishes it first,
      // and its next command is answered 421 by smtp-server.
      for (const c of server.connections) {
        if (c.session.envelope?.mailFrom) continue;
        c.send(421, '4.3.2 Service shutting down, retry later');
        c.close();
      }
    }),
  };
}

/**
 * smtp-server runs with ENHANCEDSTATUSCODES hidden (it would derive codes from the number alone
 * and double ours), so its own replies (syntax, sequence, limits) get theirs here, on every
 * listener: each new connection's send() completes the reply text before it is written
 * (reply.ts completeReply).
 */
type Connection = SMTPServer['connections'] extends Set<infer C> ? C : never;

export class CompletingServer extends SMTPServer {
  override connect(...args: Parameters<SMTPServer['connect']>): void {
    super.connect(...args);
    let created: Connection | undefined;
    for (const c of this.connections) created = c; // a Set keeps insertion order: the last is new
    if (!created) return;
    const send = created.send.bind(created);
    created.send = (code, data, context) => send(code, typeof data === 'string' ? completeReply(code, data) : data, context);
  }
}
