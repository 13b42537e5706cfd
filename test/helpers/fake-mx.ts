/**
 * An MX with a fault smtp-server cannot be configured to have, over a real TCP socket on a
 * loopback address: a 5xx greeting, STARTTLS advertised and then refused (454), a QUIT never
 * answered (SMTPUTF8 offered), or every RCPT answered 451 or 550 (on one address while another
 * host on the same port accepts). Past the greeting it speaks just enough SMTP (EHLO, MAIL,
 * RCPT, DATA, QUIT) to take a message in clear text and records it. Closed in t.teardown.
 */
import net from 'node:net';

export interface FakeMx { received: string[]; sessions: number; /** Sessions whose socket has closed. */ closed: number; /** RCPT commands received. */ rcpts: number }

export async function startFakeMx(t: { teardown(fn: () => unknown): void }, host: string, port: number, mode: 'greet-554' | 'refuse-starttls' | 'ignore-quit' | 'rcpt-451' | 'rcpt-550'): Promise<FakeMx> {
  const fake: FakeMx = { received: [], sessions: 0, closed: 0, rcpts: 0 };
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    fake.sessions++;
    open.add(socket);
    socket.on('close', () => {
      open.delete(socket);
      fake.closed++;
    });
    socket.on('error', () => undefined);
    if (mode === 'greet-554') {
      socket.end('554 5.7.1 go away\r\n');
      return;
    }
    socket.write(`220 ${host} ESMTP fake\r\n`);
    let buffer = '';
    let data: string | null = null;
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      let nl: number;
      while ((nl = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        if (data !== null) {
          if (line === '.') {
            fake.received.push(data);
            data = null;
            socket.write('250 2.0.0 queued\r\n');
          } else data += `${line.startsWith('..') ? line.slice(1) : line}\r\n`;
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'RCPT') fake.rcpts++;
        if (verb === 'EHLO') {
          const extra = mode === 'ignore-quit' ? '250-8BITMIME\r\n250 SMTPUTF8' : mode === 'refuse-starttls' ? '250-8BITMIME\r\n250 STARTTLS' : '250 8BITMIME';
          socket.write(`250-${host}\r\n${extra}\r\n`);
        } else if (verb === 'RCPT' && mode === 'rcpt-451') socket.write('451 4.3.0 mailbox busy, try later\r\n');
        else if (verb === 'RCPT' && mode === 'rcpt-550') socket.write('550 5.1.1 no such mailbox\r\n');
        else if (verb === 'STAR') socket.write('454 4.7.0 TLS not available\r\n');
        else if (verb === 'DATA') {
          data = '';
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          if (mode !== 'ignore-quit') socket.end('221 bye\r\n');
        }
        else if (verb === 'RSET' || verb === 'NOOP' || verb === 'MAIL' || verb === 'RCPT') socket.write('250 2.0.0 ok\r\n');
        else socket.write('502 5.5.2 not implemented\r\n');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  // The service's pooled connection would stay open until its idle timeout (30 s): cut it.
  t.teardown(() => new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const socket of open) socket.destroy();
  }));
  return fake;
}
