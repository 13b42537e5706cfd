/**
 * `npm run bench`: throughput of the accept path with durability on, beside this machine's own
 * fsync rate measured in the same run (group commit must beat one fsync per message).
 *  - HTTP: autocannon, 32 connections, POST /v1/mails/send, one recipient, ~2 KB of HTML.
 *  - SMTP: 16 parallel sessions of bench/smtp-source (pipelined MAIL/RCPT/DATA, as Postfix's
 *    smtp-source drives a server), one recipient, the same body composed once (MailComposer): the
 *    client shares the two cores, and nodemailer's transport took ~0.4 ms a message, as much as
 *    the service.
 * The service runs as its own process (node dist/src/main.js) so its peak RSS is its own.
 * Then the same clients drive bench/bare-door.js (the libraries alone, no service work) for the
 * ceiling of each door on this machine (BENCH_NO_BARE=1 skips it).
 * A benchmark, not a test: it prints numbers and compares them to the targets of the issues.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import readline from 'node:readline';
import autocannon from 'autocannon';
import MailComposer from 'nodemailer/lib/mail-composer';
import { smtpSource } from './smtp-source';

// The service and CLI compiled beside this file (dist/ for `npm run bench`, or any --outDir).
const outDir = path.join(__dirname, '..');
const mainJs = path.join(outDir, 'src', 'main.js');
const cliJs = path.join(outDir, 'src', 'cli', 'main.js');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
// BENCH_ONLY=http or smtp runs one door (to profile it alone).
const only = process.env.BENCH_ONLY ?? '';

function fsyncRate(dir: string, ms = 2000): number {
  const file = path.join(dir, 'fsync-probe');
  const fd = fs.openSync(file, 'w');
  const buf = Buffer.alloc(2048, 'x');
  let n = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    fs.writeSync(fd, buf, 0, buf.length, 0);
    fs.fsyncSync(fd);
    n++;
  }
  fs.closeSync(fd);
  fs.rmSync(file);
  return (n * 1000) / ms;
}

function cli(env: NodeJS.ProcessEnv, ...args: string[]): Record<string, unknown> {
  const r = spawnSync(process.execPath, [cliJs, ...args, '--json'], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`estafeta ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

async function startService(env: NodeJS.ProcessEnv) {
  // BENCH_NODE_ARGS passes node flags to the service only (e.g. `--cpu-prof` to profile it).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, mainJs], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const addresses: Record<string, string> = {};
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const rec = JSON.parse(line) as { event?: string; listener?: string; address?: string };
        if (rec.event === 'listener.ready' && rec.listener && rec.address) addresses[rec.listener] = rec.address;
        if (addresses.http && addresses.smtp) resolve();
      } catch { /* not JSON */ }
    });
    child.on('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
  return { child, addresses };
}

/** CPU seconds (user + system) the process used so far: a per-message cost that noise on a shared machine blurs less than a rate. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ
}

/**
 * Bytes the process wrote through syscalls so far (/proc/PID/io wchar): spool, WAL, sockets.
 * Per message it shows what a commit costs in pages (the WAL takes 4 KiB + 24 bytes per page).
 */
function bytesWritten(pid: number): number {
  return Number(/^wchar: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
}

/** The machine's CPU time so far (all cores), total and stolen by the hypervisor (/proc/stat). */
function machineCpu(): { total: number; steal: number } {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { total: f.reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
}

function peakRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

// The sandbox sender `instance create bench` provisions, and a sandbox recipient (captured, never relayed).
const sender = 'sandbox@bench.sandbox.test';
const rcpt = 'reader@bench.sandbox.test';
const html = `<html><body>${'<p>Estafeta benchmark paragraph with some text to make the body realistic.</p>\n'.repeat(25)}</body></html>`;

async function benchSmtp(host: string, port: number, slug: string, key: string) {
  const sessions = 16;
  const message = await new MailComposer({ from: sender, to: rcpt, subject: 'bench', html }).compile().build();
  const start = Date.now();
  const latencies = await smtpSource({ host, port, user: slug, pass: key, from: sender, to: rcpt, message, sessions, until: start + seconds * 1000 });
  const elapsed = (Date.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { rate: latencies.length / elapsed, p50: latencies[Math.floor(latencies.length * 0.5)], p99: latencies[Math.floor(latencies.length * 0.99)], total: latencies.length };
}

/** Starts bench/bare-door.js (the libraries alone, see there) and resolves its port. */
async function startBare(kind: 'smtp' | 'http') {
  const child = spawn(process.execPath, [path.join(__dirname, 'bare-door.js'), kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.on('exit', (code) => reject(new Error(`bare ${kind} door exited ${code}`)));
  });
  return { child, port };
}

function httpLoad(url: string, headers: Record<string, string>) {
  return autocannon({
    url, connections: 32, duration: seconds, method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ sender_email: sender, to: [{ email: rcpt }], subject: 'bench', html }),
  });
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'estafeta-bench-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env, ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0',
    ESTAFETA_LOG_LEVEL: 'info', ESTAFETA_HOSTNAME: 'bench.estafeta.test', ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: 'true',
  };
  const fsyncs = fsyncRate(dataDir);
  cli(env, 'instance', 'create', 'bench');
  const key = String(cli(env, 'apikey', 'create', 'bench').api_key);
  const svc = await startService(env);
  try {
    const pid = svc.child.pid as number;
    const cpu0 = cpuSeconds(pid);
    const written0 = bytesWritten(pid);
    const client0 = process.cpuUsage();
    const machine0 = machineCpu();
    const http = only === 'smtp' ? { '2xx': 0, duration: 0, non2xx: 0, errors: 0, latency: { p50: NaN, p99: NaN } }
      : await httpLoad(`http://${svc.addresses.http}/v1/mails/send`, { authorization: `Bearer ${key}`, 'x-instance-slug': 'bench' });
    const httpRate = http['2xx'] / (http.duration || seconds);
    const cpu1 = cpuSeconds(pid);
    const written1 = bytesWritten(pid);
    const client1 = process.cpuUsage(client0);
    const client1Start = process.cpuUsage();
    const [smtpHost, smtpPort] = svc.addresses.smtp.split(/:(?=\d+$)/);
    const smtp = only === 'http' ? { rate: 0, p50: NaN, p99: NaN, total: 0 } : await benchSmtp(smtpHost, Number(smtpPort), 'bench', key);
    const client2 = process.cpuUsage(client1Start);
    const cpu2 = cpuSeconds(pid);
    const written2 = bytesWritten(pid);
    const machine1 = machineCpu();
    const stolen = (100 * (machine1.steal - machine0.steal)) / Math.max(1, machine1.total - machine0.total);
    const rss = peakRss(svc.child.pid as number);
    const metrics = await (await fetch(`http://${svc.addresses.http}/metrics`)).text();
    const counter = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
    const flushes = counter('estafeta_spool_flushes_total');
    const spooled = counter('estafeta_spool_messages_total');
    svc.child.kill('SIGTERM');
    // The same clients against the bare libraries, one door at a time, with the service stopped.
    let bareHttp = NaN;
    let bareSmtp = NaN;
    if (!process.env.BENCH_NO_BARE) {
      if (only !== 'smtp') {
        const bare = await startBare('http');
        const r = await httpLoad(`http://127.0.0.1:${bare.port}/v1/mails/send`, {});
        bareHttp = r['2xx'] / (r.duration || seconds);
        bare.child.kill();
      }
      if (only !== 'http') {
        const bare = await startBare('smtp');
        bareSmtp = (await benchSmtp('127.0.0.1', bare.port, 'bench', 'any')).rate;
        bare.child.kill();
      }
    }
    const row = (name: string, v: string) => console.log(`${name.padEnd(34)} ${v}`);
    console.log(`\nEstafeta accept benchmark (${os.cpus().length} cores, ${seconds}s per door, durability on)\n`);
    row('machine fsync/s (one 2 KB write+fsync)', fsyncs.toFixed(0));
    row('HTTP sends/s (32 conns)', `${httpRate.toFixed(0)}  p50 ${http.latency.p50} ms  p99 ${http.latency.p99} ms  non-2xx ${http.non2xx}  errors ${http.errors}`);
    row('SMTP messages/s (16 sessions)', `${smtp.rate.toFixed(0)}  p50 ${smtp.p50?.toFixed(1)} ms  p99 ${smtp.p99?.toFixed(1)} ms`);
    const perMessage = (cpu: number, n: number): string => (n > 0 ? `${((cpu * 1000) / n).toFixed(2)} ms` : 'n/a');
    row('service CPU per message', `HTTP ${perMessage(cpu1 - cpu0, http['2xx'])}  SMTP ${perMessage(cpu2 - cpu1, smtp.total)} (the bench's sandbox mail is captured in the accept transaction)`);
    const perMessageKb = (bytes: number, n: number): string => (n > 0 ? `${(bytes / 1024 / n).toFixed(1)} KB` : 'n/a');
    // The clients share the two cores with the service: what they take is CPU the service lacks.
    row('client CPU per message', `HTTP ${perMessage((client1.user + client1.system) / 1e6, http['2xx'])} (autocannon)  SMTP ${perMessage((client2.user + client2.system) / 1e6, smtp.total)} (bench/smtp-source), in this process`);
    row('service bytes written per message', `HTTP ${perMessageKb(written1 - written0, http['2xx'])}  SMTP ${perMessageKb(written2 - written1, smtp.total)} (spool, WAL, sockets)`);
    row('bare libraries, same clients', `HTTP ${bareHttp.toFixed(0)}/s (Koa + @koa/router + koa-body)  SMTP ${bareSmtp.toFixed(0)}/s (smtp-server, AUTH, DATA dropped)`);
    row('service peak RSS', `${rss.toFixed(0)} MB`);
    row('load average (1 min) at the end', os.loadavg()[0].toFixed(2));
    // A shared virtual machine lends its cores: the share the hypervisor kept is CPU the doors never had.
    row('CPU stolen by the hypervisor', `${stolen.toFixed(1)}% of the machine's CPU time during the two runs`);
    row('spool flushes (fdatasync)', `${flushes} for ${spooled} messages: ${(spooled / flushes).toFixed(1)} messages per flush`);
    row('targets', 'HTTP >= 3000/s, SMTP >= 2000/s, both > machine fsync/s');
    row('HTTP beats one fsync per message', String(httpRate > fsyncs));
    row('SMTP beats one fsync per message', String(smtp.rate > fsyncs));
    row('fewer flushes than messages', String(flushes < spooled));
  } finally {
    svc.child.kill('SIGTERM');
    if (svc.child.exitCode === null && svc.child.signalCode === null) await new Promise((resolve) => svc.child.once('exit', resolve));
    if (process.env.BENCH_KEEP) console.log(`store kept in ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
