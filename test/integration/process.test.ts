import t from 'tap';
import { spawnService } from '../helpers/process';
import { runCli, tempDir, waitFor } from '../helpers/service';
import net from 'node:net';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';

/** Connects, reads the greeting, then stays idle; `closed` resolves with everything the server sent. */
async function idleSession(address: string): Promise<{ closed: Promise<string> }> {
  const [host, port] = address.split(/:(?=\d+$)/);
  const socket = net.connect(Number(port), host);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  await waitFor(async () => text.startsWith('220'), { what: 'the SMTP greeting' });
  return { closed: new Promise((resolve) => socket.on('close', () => resolve(text))) };
}

t.test('the service process: ready lines, /healthz, graceful SIGTERM, data kept across restarts', async (t) => {
  const dataDir = tempDir();
  const env = { ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0', ESTAFETA_HOSTNAME: 'mta.estafeta.test' };
  const created = await runCli(env, ['instance', 'create', 'keep', '--json']);
  t.equal(created.code, 0);
  const key = (await runCli(env, ['apikey', 'create', 'keep', '--json'])).json.api_key as string;

  // /healthz is 200 once EVERY listener is up (CONTRACT §1): wait for all three ready lines.
  const first = await spawnService(t, env, ['http', 'smtp', 'mx']);
  t.match(first.addresses.http, /^127\.0\.0\.1:\d+$/);
  const readyLine = first.lines.find((l) => l.event === 'listener.ready' && l.listener === 'http');
  t.match(readyLine?.msg, /http listening on 127\.0\.0\.1:\d+/);
  const base = `http://${first.addresses.http}`;
  // The last ready line and the ready flag are a few ticks apart: a client polls /healthz.
  await waitFor(async () => (await fetch(`${base}/healthz`)).status === 200, { what: '/healthz 200' }).catch(() => undefined);
  const health = await fetch(`${base}/healthz`);
  t.equal(health.status, 200);
  t.same(await health.json(), { status: 'ok' });

  // Idle SMTP sessions do not hold the stop (CONTRACT §1, bounded wait): each is told 421 at once.
  const idle = await Promise.all(['smtp', 'mx'].map((name) => idleSession(first.addresses[name])));
  first.child.kill('SIGTERM');
  t.same(await first.exited, { code: 0, signal: null }, 'SIGTERM exits 0');
  for (const [i, name] of ['smtp', 'mx'].entries()) t.match(await idle[i].closed, /^421 4\.3\.2 /m, `an idle ${name} session is told 421`);

  // The ready lines are the operator's to see at any level but silent.
  const quiet = await spawnService(t, { ...env, ESTAFETA_LOG_LEVEL: 'warn' }, ['http', 'smtp', 'mx']);
  t.same(quiet.lines.filter((l) => l.event === 'listener.ready').map((l) => l.listener).sort(), ['http', 'mx', 'smtp'], 'ready lines on warn');
  quiet.child.kill('SIGTERM');
  await quiet.exited;

  const second = await spawnService(t, env, ['http', 'smtp', 'mx']);
  const res = await fetch(`http://${second.addresses.http}/v1/senders`, { headers: { Authorization: `Bearer ${key}`, 'X-Instance-Slug': 'keep' } });
  t.equal(res.status, 200, 'the key created before the restart still works');
  const body = (await res.json()) as { data: { email_address: string }[] };
  t.same(body.data.map((s) => s.email_address), ['sandbox@keep.sandbox.test']);
  // Each request's id is in the log (spec, Identifiers), with its outcome; a trace id rides along.
  const traced = await fetch(`http://${second.addresses.http}/v1/nothing`, { headers: { Authorization: `Bearer ${key}`, 'X-Instance-Slug': 'keep', 'X-Request-Id': 'find me 42' } });
  t.equal(traced.status, 404);
  t.match(traced.headers.get('x-trace-id'), /^[0-9a-f]{32}$/);
  await waitFor(async () => second.lines.some((l) => l.request_id === 'find me 42'), { what: 'the request line' });
  t.match(second.lines.find((l) => l.request_id === 'find me 42'), { msg: 'http.request', method: 'GET', path: '/v1/nothing', status: 404, trace_id: traced.headers.get('x-trace-id') });
  second.child.kill('SIGINT');
  t.equal((await second.exited).code, 0, 'SIGINT exits 0');
});

/** The service as `npm start` runs it from the project root, once its listeners are ready. */
async function npmStart(t: Parameters<typeof spawnService>[0]) {
  const env = { ESTAFETA_DATA_DIR: tempDir(), ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0', ESTAFETA_HOSTNAME: 'mta.estafeta.test' };
  const root = path.join(__dirname, '..', '..', '..');
  const npm = await spawnService(t, env, ['http', 'smtp', 'mx'], { file: 'npm', args: ['start', '--silent'], cwd: root });
  return { env, npm, base: `http://${npm.addresses.http}` };
}

t.test('`npm start` is the service process itself: a SIGTERM to npm stops it and exits 0', async (t) => {
  const { npm, base } = await npmStart(t);
  t.equal((await fetch(`${base}/healthz`)).status, 200);
  npm.child.kill('SIGTERM'); // to npm alone, as a supervisor that knows only its child does
  t.same(await npm.exited, { code: 0, signal: null }, 'npm exits 0');
  await t.rejects(fetch(`${base}/healthz`), 'nothing serves the port any more: the service stopped with npm');
});

// A supervisor that SIGKILLs the `npm start` it spawned (a crash test) must not leave the service
// running unseen: it would hold the ports and the data dir against the restart.
t.test('a SIGKILL to `npm start` ends the service too, and the data dir is free for the next start', async (t) => {
  const { env, npm, base } = await npmStart(t);
  t.equal((await fetch(`${base}/healthz`)).status, 200);
  npm.child.kill('SIGKILL');
  await npm.exited;
  await waitFor(async () => fetch(`${base}/healthz`).then(() => false, () => true), { what: 'the orphaned service gone' });
  const next = await spawnService(t, env, ['http', 'smtp', 'mx']);
  t.equal((await fetch(`http://${next.addresses.http}/healthz`)).status, 200, 'the next start takes the data dir');
  next.child.kill('SIGTERM');
  t.same(await next.exited, { code: 0, signal: null });
});

// CONTRACT §1: one process; a second server on the same data dir would deliver its queue twice.
t.test('a second server on a data dir in use is refused with one line naming ESTAFETA_DATA_DIR', async (t) => {
  const env = { ESTAFETA_DATA_DIR: tempDir(), ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0' };
  const first = await spawnService(t, env, ['http', 'smtp', 'mx']);
  const err = await spawnService(t, env, ['http', 'smtp', 'mx']).then(() => null, (e: Error) => e.message);
  t.match(err, /exited with 1 before ready: estafeta: failed to start \(ESTAFETA_DATA_DIR\): another server runs on the data dir/);
  t.equal((await runCli(env, ['instance', 'create', 'beside', '--json'])).code, 0, 'the CLI still runs beside the server');
  t.equal((await fetch(`http://${first.addresses.http}/healthz`)).status, 200, 'the first goes on');
  first.child.kill('SIGTERM');
  t.same(await first.exited, { code: 0, signal: null });
});

t.test('a SIGTERM while the service\'s modules are still loading exits 0 as well', async (t) => {
  // A preload (real process, real signal) sends the signal at the exact moment main.js asks for
  // the service module, the ~second a start spends loading code before any listener exists.
  const dir = tempDir();
  const preload = path.join(dir, 'term-on-load.js');
  fs.writeFileSync(preload, `const Module = require('module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === './service') { Module._load = load; process.kill(process.pid, 'SIGTERM'); }
  return load.call(this, request, ...rest);
};\n`);
  const main = path.join(__dirname, '..', '..', 'src', 'main.js');
  const child = spawn(process.execPath, ['--require', preload, main], {
    env: { ...process.env, ESTAFETA_DATA_DIR: dir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0' }, stdio: 'ignore',
  });
  const exited = await new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  t.same(exited, { code: 0, signal: null });
});

t.test('an invalid configuration stops the start with the failing key', async (t) => {
  const p = spawnService(t, { ESTAFETA_DATA_DIR: tempDir(), ESTAFETA_HTTP_PORT: 'eighty' });
  await t.rejects(p, /ESTAFETA_HTTP_PORT/);
});

// A start that fails past the configuration (a port another program holds) is one line naming
// the setting, exit 1: it was a stack trace.
t.test('a port already taken stops the start with one line naming its setting', async (t) => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => holder.close());
  const port = (holder.address() as net.AddressInfo).port;
  const p = spawnService(t, { ESTAFETA_DATA_DIR: tempDir(), ESTAFETA_HTTP_PORT: String(port) });
  const err = await p.then(() => null, (e: Error) => e.message);
  t.match(err, new RegExp(`exited with 1 before ready: estafeta: failed to start \\(ESTAFETA_HTTP_PORT\\): listen EADDRINUSE[^\\n]*:${port}\\n$`));
  t.notMatch(err, /\n\s+at /, 'no stack trace');
});

t.test('a data dir that cannot be made stops the start with one line naming ESTAFETA_DATA_DIR, at once', async (t) => {
  // Under /proc mkdir answers ENOENT for a parent that exists: Node's recursive mkdir spun a core
  // there forever; a path under a regular file is the portable case.
  const file = path.join(tempDir(), 'a-file');
  fs.writeFileSync(file, '');
  for (const dir of ['/proc/estafeta-nope/x', path.join(file, 'data')]) {
    const err = await spawnService(t, { ESTAFETA_DATA_DIR: dir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0' }).then(() => null, (e: Error) => e.message);
    t.match(err, /exited with 1 before ready: estafeta: failed to start \(ESTAFETA_DATA_DIR\): /, dir);
    t.notMatch(err, /\n\s+at /, 'no stack trace');
  }
});
