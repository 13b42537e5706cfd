/**
 * A real SMTP sink (smtp-server on 127.0.0.1:0) standing in for a recipient's MX or a relay. It
 * records what it receives and answers as scripted: 451 for the first N messages, 550 for some
 * recipients, a dropped connection, AUTH required. Closed in t.teardown.
 */
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface SunkMessage { from: string; to: string[]; raw: Buffer; secure: boolean; user?: string; /** MAIL FROM parameters (BODY=8BITMIME, SMTPUTF8...). */ mailArgs: Record<string, string | boolean> }

export interface SinkScript {
  /** Answer 451 at DATA to the first N messages. */
  failFirst?: number;
  /** Recipients answered 550 at RCPT. */
  reject?: (rcpt: string) => boolean;
  /** Close the connection without a reply at DATA for the first N messages. */
  dropFirst?: number;
  /** Never answer DATA for the first N messages (an attempt stays in flight until the sink closes). */
  holdFirst?: number;
  /** Answer DATA only once this settles (an attempt stays in flight until the test lets it end). */
  gate?: Promise<unknown>;
  /** Require AUTH with these credentials (a relay). */
  auth?: { user: string; pass: string };
  /** Refuse every MAIL FROM with this reply (a host that will not take our return path). */
  refuseSender?: { code: number; text: string };
  /** Leave 8BITMIME out of the EHLO reply (an MX that takes 7-bit mail only, RFC 6152). */
  no8BitMime?: boolean;
  /** Leave SMTPUTF8 out of the EHLO reply (an MX that takes ASCII addresses only, RFC 6531). */
  noSmtpUtf8?: boolean;
}

export interface Sink {
  port: number;
  received: SunkMessage[];
  /** MAIL FROM counts including refused ones, and connections seen. */
  stats: { connections: number; attempts: number; held: number };
  script: SinkScript;
  close(): Promise<void>;
}

export async function startSink(t: { teardown(fn: () => unknown): void }, script: SinkScript = {}): Promise<Sink> {
  const received: SunkMessage[] = [];
  const stats = { connections: 0, attempts: 0, held: 0 };
  const sink: Partial<Sink> = { received, stats, script };
  const options: SMTPServerOptions = {
    disableReverseLookup: true,
    logger: false,
    authOptional: !script.auth,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    hide8BITMIME: script.no8BitMime === true,
    hideSMTPUTF8: script.noSmtpUtf8 === true,
    onConnect(_session, cb) {
      stats.connections++;
      cb();
    },
    onAuth(auth, _session, cb) {
      const ok = script.auth && auth.username === script.auth.user && auth.password === script.auth.pass;
      if (!ok) return cb(Object.assign(new Error('5.7.8 bad credentials'), { responseCode: 535 }));
      cb(null, { user: auth.username });
    },
    onMailFrom(_address, _session, cb) {
      stats.attempts++;
      const refuse = sink.script?.refuseSender;
      if (refuse) return cb(Object.assign(new Error(refuse.text), { responseCode: refuse.code }));
      cb();
    },
    onRcptTo(address, _session, cb) {
      if (sink.script?.reject?.(address.address)) return cb(Object.assign(new Error('5.1.1 no such user'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const s = sink.script ?? {};
        if (s.dropFirst && s.dropFirst > 0) {
          s.dropFirst--;
          // Simulates a crash of the remote MTA mid-transaction: the socket closes without a reply.
          const conns = (server as unknown as { connections: Set<{ id: string; _socket: { destroy(): void } }> }).connections;
          for (const c of conns) if (c.id === session.id) c._socket.destroy();
          return;
        }
        if (s.holdFirst && s.holdFirst > 0) {
          s.holdFirst--;
          stats.held++;
          return;
        }
        if (s.gate) {
          stats.held++;
          void s.gate.then(() => { stats.held--; accept(); });
          return;
        }
        accept();
      });
      const accept = (): void => {
        const s = sink.script ?? {};
        if (s.failFirst && s.failFirst > 0) {
          s.failFirst--;
          return cb(Object.assign(new Error('4.3.0 try again later'), { responseCode: 451 }));
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
          mailArgs: (session.envelope.mailFrom && session.envelope.mailFrom.args) || {},
        });
        cb(null, `2.0.0 Ok: queued as sink${received.length}`);
      };
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.on('error', () => undefined); // dropped connections are part of the script
  const address = server.server.address();
  sink.port = typeof address === 'object' && address ? address.port : 0;
  let closed = false;
  sink.close = () => {
    if (closed) return Promise.resolve();
    closed = true;
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.teardown(sink.close);
  return sink as Sink;
}
