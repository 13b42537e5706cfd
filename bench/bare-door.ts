/**
 * The ceiling of a door on this machine: the same libraries the service is built on, doing
 * nothing but the protocol. `node bare-door.js smtp|http` listens on a loopback port, prints it,
 * and answers every message (smtp-server: AUTH accepted, DATA read and dropped, 250) or every
 * POST (Koa + @koa/router + koa-body: JSON parsed, 200 with a message_id). bench/run.ts drives
 * it with the same clients and settings as the service, so the difference between the two is
 * what the service's own work costs, and the bare number is what no service on these libraries
 * can pass on this machine.
 */
import Koa from 'koa';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

const kind = process.argv[2];
const ready = (port: number): void => console.log(JSON.stringify({ port }));

if (kind === 'smtp') {
  const server = new SMTPServer({
    authOptional: false, allowInsecureAuth: true, disableReverseLookup: true, logger: false, authMethods: ['PLAIN', 'LOGIN'],
    onAuth: (auth, _session, cb) => cb(null, { user: auth.username }),
    onData: (stream, _session, cb) => {
      stream.on('data', () => undefined);
      stream.on('end', () => cb(null, '2.0.0 Ok: queued'));
    },
  });
  server.listen(0, '127.0.0.1', () => ready((server.server.address() as AddressInfo).port));
} else if (kind === 'http') {
  const app = new Koa();
  const router = new Router();
  let n = 0;
  router.post('/v1/mails/send', koaBody(), (ctx) => {
    const body = ctx.request.body as { subject?: string };
    ctx.body = { message_id: `${body.subject ?? ''}-${++n}` };
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1', () => ready((server.address() as AddressInfo).port));
} else {
  console.error('usage: bare-door.js smtp|http');
  process.exit(2);
}
