/**
 * Delivery benchmark (issue 5): a full queue of N mails (default 100,000, one recipient each,
 * ~2 KB of HTML with links) drained by the service — as its own process — to an SMTP sink on
 * loopback with DKIM and tracking on. Prints mails/s and the service's peak RSS (VmHWM).
 * Run: npm run build && node dist/bench/delivery.js   (BENCH_DELIVERY_MAILS=N to change N)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import readline from 'node:readline';
import { SMTPServer } from 'smtp-server';
import MailComposer from 'nodemailer/lib/mail-composer';
import { openDb } from '../src/store/db';
import { startDns } from '../test/helpers/dns-server';

// The service compiled next to this script (dist*/src), whatever the output dir.
const mainJs = path.join(__dirname, '..', 'src', 'main.js');
const cliJs = path.join(__dirname, '..', 'src', 'cli', 'main.js');
const total = Number(process.env.BENCH_DELIVERY_MAILS ?? 100_000);

function cli(env: NodeJS.ProcessEnv, ...args: string[]): Record<string, unknown> {
  const r = spawnSync(process.execPath, [cliJs, ...args, '--json'], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`estafeta ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

async function fillQueue(dataDir: string, instanceId: number): Promise<void> {
  const html = `<html><body>${'<p>Hello there, this is the benchmark newsletter. <a href="https://brand.test/offer?id=1">Offer</a></p>'.repeat(20)}</body></html>`;
  const raw = await new MailComposer({ from: 'news@brand.test', to: 'rcpt@example.test', subject: 'Bench', html, text: 'Hello' }).compile().build();
  const db = openDb(dataDir);
  const dir = path.join(dataDir, 'messages');
  fs.mkdirSync(dir, { recursive: true });
  const now = Date.now();
  const msg = db.prepare(`INSERT INTO messages (msg_id, instance_id, sender_email, subject, spool_file, size, door, pending, received_at) VALUES (?, ?, 'news@brand.test', 'Bench', ?, ?, 'http', 1, ?)`);
  const mail = db.prepare(`INSERT INTO mails (mail_id, message_id, instance_id, msg_id, rcpt, rcpt_domain, subject, sender_email, status, next_attempt_at, received_at, queued_at)
    VALUES (?, ?, ?, ?, ?, 'example.test', 'Bench', 'news@brand.test', 2, ?, ?, ?)`);
  for (let start = 0; start < total; start += 10_000) {
    db.transaction(() => {
      for (let i = start; i < Math.min(total, start + 10_000); i++) {
        const id = `bench.${i}.${crypto.randomBytes(3).toString('hex')}`;
        fs.writeFileSync(path.join(dir, `${id}.eml`), raw);
        const m = msg.run(id, instanceId, `${id}.eml`, raw.length, now);
        mail.run(`${id}.r0`, m.lastInsertRowid, instanceId, id, `rcpt${i}@example.test`, now, now, now);
      }
    })();
  }
  db.close();
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'estafeta-bench-delivery-'));
  let received = 0;
  let first = 0;
  let last = 0;
  const sink = new SMTPServer({
    disableReverseLookup: true, authOptional: true, logger: false,
    onData(stream, _s, cb) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received++;
        last = Date.now();
        first ||= last;
        cb();
      });
    },
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  const sinkPort = (sink.server.address() as { port: number }).port;
  const teardown: (() => unknown)[] = [];
  const dns = await startDns({ teardown: (fn) => teardown.push(fn) }, {
    'example.test': { MX: [{ exchange: 'mx.example.test', priority: 10 }] }, 'mx.example.test': { A: ['127.0.0.1'] },
  });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0',
    ESTAFETA_HOSTNAME: 'mta.bench.test', ESTAFETA_LOG_LEVEL: 'warn', ESTAFETA_DNS_SERVERS: dns.address, ESTAFETA_DELIVERY_PORT: String(sinkPort),
  };
  const inst = cli(env, 'instance', 'create', 'bench');
  cli(env, 'domain', 'add', 'bench', 'brand.test');
  const t0 = Date.now();
  await fillQueue(dataDir, Number(inst.id));
  console.log(`queued ${total} mails in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const prof = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, mainJs], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  readline.createInterface({ input: child.stdout }).on('line', () => undefined);
  const started = Date.now();
  while (received < total) {
    await new Promise((r) => setTimeout(r, 200));
    if (Date.now() - started > 30 * 60_000) throw new Error(`only ${received} of ${total} delivered`);
  }
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const tick = 100; // USER_HZ
  const cpu = process.cpuUsage();
  console.log(`cpu: service ${((Number(stat[11]) + Number(stat[12])) / tick).toFixed(1)} s, bench+sink ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`);
  const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const rate = (received * 1000) / Math.max(1, last - first);
  console.log(`delivery: ${received} mails in ${((last - first) / 1000).toFixed(1)} s = ${rate.toFixed(0)} mails/s (target >= 1000); peak RSS ${(peakKb / 1024).toFixed(0)} MB (target < 300)`);
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  sink.close();
  for (const fn of teardown) await fn();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
