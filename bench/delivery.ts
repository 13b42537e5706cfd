/**
 * Delivery benchmark (issue 5): N mails (BENCH_DELIVERY_MAILS, default 100,000; one recipient
 * each, ~3 KB of html with 20 links) queued through the real HTTP API from a verified domain, then
 * drained by the service — as its own process — to an SMTP sink on loopback with DKIM and tracking
 * on. Prints mails/s and the draining process's peak RSS (VmHWM). Run: npm run bench.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { SMTPServer } from 'smtp-server';
import { startDns } from '../test/helpers/dns-server';
import { baseZone, SENDER, verifyBrand } from '../test/helpers/delivery-world';
import { runCli } from '../test/helpers/service';

// The service compiled next to this script (dist*/src), whatever the output dir.
const mainJs = path.join(__dirname, '..', 'src', 'main.js');
const total = Number(process.env.BENCH_DELIVERY_MAILS ?? 100_000);
const fillConnections = 32;
const html = `<html><body>${'<p>Hello there, this is the benchmark newsletter. <a href="https://brand.test/offer?id=1">Offer</a></p>'.repeat(20)}</body></html>`;

async function startService(env: Record<string, string>): Promise<{ child: ChildProcess; http: string }> {
  const child = spawn(process.execPath, [mainJs], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const http = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      try {
        const rec = JSON.parse(line) as { event?: string; listener?: string; address?: string };
        if (rec.event === 'listener.ready' && rec.listener === 'http' && rec.address) resolve(rec.address);
      } catch { /* not a log line */ }
    });
    child.on('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
  return { child, http };
}

const stopped = (child: ChildProcess): Promise<unknown> => new Promise((r) => (child.exitCode !== null ? r(null) : child.on('exit', r)));

/** POSTs `total` one-recipient sends over `fillConnections` parallel loops; 429s are retried after Retry-After. */
async function fillQueue(base: string, key: string, slug: string): Promise<void> {
  let next = 0;
  const headers = { Authorization: `Bearer ${key}`, 'X-Instance-Slug': slug, 'Content-Type': 'application/json' };
  await Promise.all(Array.from({ length: fillConnections }, async () => {
    for (let i = next++; i < total; i = next++) {
      for (;;) {
        const body = JSON.stringify({ sender_email: SENDER, to: [{ email: `rcpt${i}@example.test` }], subject: 'Bench', html, text: 'Hello' });
        const res = await fetch(`${base}/v1/mails/send`, { method: 'POST', headers, body });
        const text = await res.text();
        if (res.status === 200) break;
        if (res.status !== 429 && res.status !== 503) throw new Error(`send ${i}: ${res.status} ${text}`);
        await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
      }
    }
  }));
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
  const sinkPort = (sink.server.address() as net.AddressInfo).port;
  // While the queue fills, the MX accepts connections and never greets: nothing is delivered yet.
  const held = new Set<net.Socket>();
  const holder = net.createServer((s) => { held.add(s); s.on('error', () => undefined); });
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
  const teardown: (() => unknown)[] = [];
  const zone = baseZone();
  const dns = await startDns({ teardown: (fn) => teardown.push(fn) }, zone);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '', ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HOST: '127.0.0.1', ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0',
    ESTAFETA_MX_PORT: '0', ESTAFETA_HOSTNAME: 'mta.bench.test', ESTAFETA_LOG_LEVEL: 'warn', ESTAFETA_DNS_SERVERS: dns.address,
    ESTAFETA_SHUTDOWN_TIMEOUT: '1',
  };
  const cli = (...args: string[]) => runCli(env, args);
  const slug = 'bench';
  if ((await cli('instance', 'create', slug, '--json')).code !== 0) throw new Error('instance create failed');
  await cli('instance', 'limits', slug, '--send-limit', 'none', '--bandwidth-bytes-per-second', 'none', '--bandwidth-burst-bytes', 'none', '--json');
  const key = String((await cli('apikey', 'create', slug, '--json')).json.api_key);

  // The filler logs at info: startService waits for its listener.ready line, an info record.
  const filler = await startService({ ...env, ESTAFETA_LOG_LEVEL: 'info', ESTAFETA_DELIVERY_PORT: String((holder.address() as net.AddressInfo).port) });
  const base = `http://${filler.http}`;
  const api = async (method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + p, { method, headers: { Authorization: `Bearer ${key}`, 'X-Instance-Slug': slug, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  await verifyBrand(api, cli, slug, zone, dns);
  const t0 = Date.now();
  await fillQueue(base, key, slug);
  const fillS = (Date.now() - t0) / 1000;
  console.log(`queued ${total} mails through POST /v1/mails/send in ${fillS.toFixed(1)} s (${(total / fillS).toFixed(0)}/s)`);
  filler.child.kill('SIGTERM');
  await stopped(filler.child);
  for (const s of held) s.destroy();
  holder.close();

  // The draining process starts with a full queue (attempts cut short above are due again at start).
  const prof = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, mainJs], { env: { ...env, ESTAFETA_DELIVERY_PORT: String(sinkPort) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const started = Date.now();
  let peakKb = 0;
  while (received < total) {
    await new Promise((r) => setTimeout(r, 200));
    const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
    peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    if (Date.now() - started > 30 * 60_000) throw new Error(`only ${received} of ${total} delivered`);
  }
  const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const tick = 100; // USER_HZ
  console.log(`cpu: service ${((Number(stat[11]) + Number(stat[12])) / tick).toFixed(1)} s`);
  const rate = (received * 1000) / Math.max(1, last - first);
  const wall = (received * 1000) / Math.max(1, last - started);
  console.log(`delivery (${os.cpus().length} cores, DKIM + tracking on): ${received} mails in ${((last - first) / 1000).toFixed(1)} s = ${rate.toFixed(0)} mails/s `
    + `(${wall.toFixed(0)}/s from process start); peak RSS ${(peakKb / 1024).toFixed(0)} MB; targets >= 1000 mails/s, < 300 MB`);
  child.kill('SIGTERM');
  await stopped(child);
  sink.close();
  for (const fn of teardown) await fn();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
