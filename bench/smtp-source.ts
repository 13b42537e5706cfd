/**
 * A lean SMTP load client, in the manner of Postfix's smtp-source: one session per connection,
 * AUTH PLAIN once, then MAIL FROM, RCPT TO and DATA pipelined (RFC 2920: the client waits for
 * 354 before the body) and a message already dot-stuffed, written as one buffer. The clients of
 * the bench share the machine's two cores with the service, so what a client spends is CPU the
 * service lacks: nodemailer's transport took 0.3-0.5 ms per message, as much as the service.
 */
import net from 'node:net';

/** One SMTP session: the replies come back in order, each resolved when its last line arrives. */
class Session {
  private readonly socket: net.Socket;
  private pending = '';
  /** The lines of a multi-line reply read so far. */
  private lines = '';
  private readonly waiting: ((reply: string) => void)[] = [];
  private readonly arrived: string[] = [];
  private failure: Error | null = null;

  constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.read(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  private read(chunk: string): void {
    this.pending += chunk;
    let eol: number;
    while ((eol = this.pending.indexOf('\r\n')) >= 0) {
      const line = this.pending.slice(0, eol);
      this.pending = this.pending.slice(eol + 2);
      this.lines += `${line}\n`;
      // "250-" continues a reply, "250 " ends it.
      if (line[3] === '-') continue;
      const waiter = this.waiting.shift();
      if (waiter) waiter(this.lines);
      else this.arrived.push(this.lines);
      this.lines = '';
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const waiter of this.waiting.splice(0)) waiter(`000 ${err.message}\n`);
  }

  /** The next reply, which must start with `code`. */
  async expect(code: string): Promise<string> {
    const reply = this.arrived.shift() ?? (this.failure ? `000 ${this.failure.message}\n` : await new Promise<string>((resolve) => this.waiting.push(resolve)));
    if (!reply.startsWith(code)) throw new Error(`expected ${code}, got ${reply.trim()}`);
    return reply;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  async quit(): Promise<void> {
    this.write('QUIT\r\n');
    await this.expect('221').catch(() => undefined);
    this.socket.destroy();
  }
}

export interface SourceOptions {
  host: string;
  port: number;
  user: string;
  pass: string;
  from: string;
  to: string;
  /** The whole message, CRLF line ends. */
  message: Buffer;
  sessions: number;
  /** Until when to keep sending (Date.now() milliseconds). */
  until: number;
}

/** Drives `sessions` parallel sessions until `until`; returns each message's latency in ms. */
export async function smtpSource(o: SourceOptions): Promise<number[]> {
  // Dot-stuffed once (RFC 5321 §4.5.2), with the terminating line.
  const body = Buffer.concat([Buffer.from(o.message.toString('latin1').replace(/(^|\r\n)\./g, '$1..'), 'latin1'), Buffer.from('\r\n.\r\n')]);
  const envelope = `MAIL FROM:<${o.from}>\r\nRCPT TO:<${o.to}>\r\nDATA\r\n`;
  const auth = Buffer.from(`\0${o.user}\0${o.pass}`).toString('base64');
  const latencies: number[] = [];
  await Promise.all(Array.from({ length: o.sessions }, async () => {
    const socket = net.connect(o.port, o.host);
    const s = new Session(socket);
    await s.expect('220');
    s.write('EHLO bench.client.test\r\n');
    await s.expect('250');
    s.write(`AUTH PLAIN ${auth}\r\n`);
    await s.expect('235');
    while (Date.now() < o.until) {
      const t0 = process.hrtime.bigint();
      s.write(envelope);
      await s.expect('250');
      await s.expect('250');
      await s.expect('354');
      s.write(body);
      await s.expect('250');
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await s.quit();
  }));
  return latencies;
}
