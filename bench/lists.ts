/**
 * `npm run bench:lists`: the mail lists at millions of rows (issue 4: "indexes so every list
 * query stays fast at millions of rows"). Seeds one instance with BENCH_MAIL_ROWS mails
 * (default 2,000,000) spread over four months, plus a small second instance, straight into the
 * store the service then opens; then times every filter of GET /v1/mails, /v1/activities/*
 * and the by-id reads over real HTTP, several runs each, and prints the median and worst time
 * with the query plan's verdict. A benchmark, not a test: nothing here asserts a time.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import Database from 'better-sqlite3';
import { newMailId, newMsgId } from '../src/accept/ids';

const outDir = path.resolve(__dirname, '..');
const mainJs = path.join(outDir, 'src', 'main.js');
const cliJs = path.join(outDir, 'src', 'cli', 'main.js');
const rows = Number(process.env.BENCH_MAIL_ROWS ?? 2_000_000);
const runs = Number(process.env.BENCH_RUNS ?? 5);
const dayMs = 86_400_000;

function cli(env: NodeJS.ProcessEnv, ...args: string[]): Record<string, unknown> {
  const r = spawnSync(process.execPath, [cliJs, ...args, '--json'], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`estafeta ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

// A deterministic generator (mulberry32), so two runs seed the same data and compare.
let seed = 42;
function rand(n: number): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return Math.floor((((x ^ (x >>> 14)) >>> 0) / 4294967296) * n);
}

interface Seeded { rareRcpt: string; commonRcpt: string; msgId: string; mailId: string; customMsgId: string; group: string; senderId: number }

/**
 * What a busy tenant's table looks like: 2 recipients per send, 50,000 distinct recipients,
 * 5 senders, 100 group codes, most mails sent, 1 in 1,000 bounced, a fifth opened, and
 * 200 subjects of which one ("invoice 7") is rare. Rows go in in reception order, as the
 * service writes them, with the ids the accept path would have made at that instant.
 */
function seedMails(dataDir: string, instanceId: number, senderIds: number[], count: number, now: number): Seeded {
  const db = new Database(path.join(dataDir, 'estafeta.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const span = 120 * dayMs;
  const insertMessage = db.prepare(`INSERT INTO messages (msg_id, instance_id, sender_id, sender_email, subject, spool_file, size, door, pending, received_at, custom_msg_id, custom_group_code)
    VALUES (?, ?, ?, ?, ?, 'seed', 2048, 'http', 0, ?, ?, ?)`);
  const insertMail = db.prepare(`INSERT INTO mails (mail_id, message_id, instance_id, msg_id, rcpt, rcpt_domain, subject, sender_id, sender_email,
    custom_msg_id, custom_group_code, status, opens, clicks, received_at, queued_at, sent_at, final_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertEvent = db.prepare('INSERT INTO mail_events (mail_row, instance_id, kind, url, at) VALUES (?, ?, ?, ?, ?)');
  const out: Partial<Seeded> = { senderId: senderIds[0] };
  const sends = Math.ceil(count / 2);
  const write = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const at = now - span + Math.floor((i / sends) * span);
      const msgId = newMsgId(at);
      const senderId = senderIds[rand(senderIds.length)];
      const subject = rand(200) === 7 ? 'Your invoice 7' : `Newsletter issue ${rand(199)}`;
      const customMsgId = i % 2 ? `order-${i}` : null;
      const group = `campaign-${rand(100)}`;
      const message = insertMessage.run(msgId, instanceId, senderId, `news@bench.test`, subject, at, customMsgId, group).lastInsertRowid;
      for (let r = 0; r < 2; r++) {
        const rcpt = `reader${rand(50_000)}@example${rand(20)}.test`;
        const roll = rand(1000);
        const status = roll === 0 ? 6 : roll < 5 ? 5 : 3;
        const opens = status === 3 && rand(5) === 0 ? 1 + rand(3) : 0;
        const mailId = newMailId(at);
        const row = insertMail.run(mailId, message, instanceId, msgId, rcpt, rcpt.split('@')[1], subject, senderId, 'news@bench.test',
          customMsgId, group, status, opens, opens ? rand(2) : 0, at, at, status === 3 ? at + 500 : null, status === 5 ? null : at + 500).lastInsertRowid;
        for (let o = 0; o < opens; o++) insertEvent.run(row, instanceId, 'open', null, at + 60_000 * (o + 1));
        if (i === Math.floor(sends * 0.9) + 1) Object.assign(out, { msgId, mailId, rareRcpt: rcpt, customMsgId: String(customMsgId), group });
      }
    }
  });
  const chunk = 20_000;
  for (let i = 0; i < sends; i += chunk) write(i, Math.min(sends, i + chunk));
  // A recipient of many mails (the sender's own test address, say): 2,000 of them.
  const common = db.prepare('SELECT id FROM mails WHERE instance_id = ? ORDER BY id DESC LIMIT 2000 OFFSET 1000').pluck().all(instanceId) as number[];
  db.prepare(`UPDATE mails SET rcpt = 'qa@example0.test' WHERE id IN (${common.join(',')})`).run();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { ...(out as Seeded), commonRcpt: 'qa@example0.test' };
}

async function startService(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [mainJs], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const rec = JSON.parse(line) as { event?: string; listener?: string; address?: string };
        if (rec.event === 'listener.ready' && rec.listener === 'http' && rec.address) resolve(`http://${rec.address}`);
      } catch { /* not JSON */ }
    });
    child.on('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
  return { child, url };
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'estafeta-lists-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env, ESTAFETA_DATA_DIR: dataDir, ESTAFETA_HTTP_PORT: '0', ESTAFETA_SMTP_PORT: '0', ESTAFETA_MX_PORT: '0',
    ESTAFETA_LOG_LEVEL: 'info', ESTAFETA_HOSTNAME: 'bench.estafeta.test',
  };
  const big = cli(env, 'instance', 'create', 'big', '--timezone', 'America/Santiago');
  const small = cli(env, 'instance', 'create', 'small');
  const key = String(cli(env, 'apikey', 'create', 'big').api_key);
  const smallKey = String(cli(env, 'apikey', 'create', 'small').api_key);
  const senderIds = [1, 2, 3, 4, 5]; // plain numbers: the lists filter on them, no row needed
  const now = Date.now();
  const t0 = Date.now();
  const s = seedMails(dataDir, Number(big.id), senderIds, rows, now);
  seedMails(dataDir, Number(small.id), [9], 2_000, now);
  const seedSeconds = (Date.now() - t0) / 1000;
  const dbBytes = fs.statSync(path.join(dataDir, 'estafeta.db')).size;

  const { child, url } = await startService(env);
  const day = (back: number) => new Date(now - back * dayMs).toISOString().slice(0, 10);
  const queries: Array<[string, string, ('small')?]> = [
    ['newest page, default window', '/v1/mails'],
    ['page 200 of 50', '/v1/mails?page=200&page_size=50'],
    ['one day (start_date=end_date, tz)', `/v1/mails?start_date=${day(30)}&end_date=${day(30)}&tz=Europe/Madrid`],
    ['whole table (start_date 4 months back)', `/v1/mails?start_date=${day(125)}`],
    ['msg_id', `/v1/mails?msg_id=${s.msgId}`],
    ['mail_id', `/v1/mails?mail_id=${s.mailId}`],
    ['sender_id', `/v1/mails?sender_id=${s.senderId}`],
    ['recipient (exact, rare)', `/v1/mails?recipient=${encodeURIComponent(s.rareRcpt)}`],
    ['recipient (exact, 2,000 mails)', `/v1/mails?recipient=${encodeURIComponent(s.commonRcpt)}`],
    ['recipient prefix (activities/sent)', `/v1/activities/sent?recipient=reader12&recipient_operator=starts_with`],
    ['custom_msg_id', `/v1/mails?custom_msg_id=${s.customMsgId}`],
    ['custom_group_code', `/v1/mails?custom_group_code=${s.group}`],
    ['subject partial, common', '/v1/mails?subject=newsletter'],
    ['subject partial, rare (1 in 200)', '/v1/mails?subject=INVOICE%207'],
    ['subject partial, absent', '/v1/mails?subject=no-such-words'],
    ['status=3', '/v1/mails?status=3'],
    ['status=6 (1 in 1,000)', '/v1/mails?status=6'],
    ['status=1 (none)', '/v1/mails?status=1'],
    ['opened=opened', '/v1/mails?opened=opened'],
    ['opened=unopened', '/v1/mails?opened=unopened'],
    ['sender_id + status=6', `/v1/mails?sender_id=${s.senderId}&status=6`],
    ['activities/opens', '/v1/activities/opens'],
    ['activities/opens group_by=msg_id', '/v1/activities/opens?group_by=msg_id'],
    ['activities/clicks', '/v1/activities/clicks'],
    ['activities/bounced', '/v1/activities/bounced'],
    ['GET /v1/mails/{mail_id}', `/v1/mails/${s.mailId}`],
    ['GET /v1/mails/{mail_id}/logs', `/v1/mails/${s.mailId}/logs`],
    ['small tenant, newest page', '/v1/mails', 'small'],
    ['small tenant, status=6', '/v1/mails?status=6', 'small'],
  ];
  const results: Array<{ name: string; p50: number; max: number; status: number; totalItems: unknown; items: number }> = [];
  for (const [name, pathQuery, tenant] of queries) {
    const headers = tenant === 'small' ? { authorization: `Bearer ${smallKey}`, 'x-instance-slug': 'small' } : { authorization: `Bearer ${key}`, 'x-instance-slug': 'big' };
    const times: number[] = [];
    let status = 0;
    let body: { data?: unknown[]; pagination?: { total_items?: unknown } } = {};
    for (let i = 0; i < runs; i++) {
      const t = process.hrtime.bigint();
      const res = await fetch(url + pathQuery, { headers });
      body = await res.json() as typeof body;
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      status = res.status;
    }
    times.sort((a, b) => a - b);
    results.push({ name, p50: times[Math.floor(times.length / 2)], max: times[times.length - 1], status, totalItems: body.pagination?.total_items, items: body.data?.length ?? 1 });
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));

  const width = Math.max(...results.map((r) => r.name.length));
  console.log(`\nMail lists at ${rows.toLocaleString('en')} mails (one instance, 120 days; seeded in ${seedSeconds.toFixed(0)} s, store ${(dbBytes / 2 ** 20).toFixed(0)} MiB), ${runs} runs each, over HTTP:`);
  console.log(`${'query'.padEnd(width)}  status  items  total_items  p50 ms   max ms`);
  for (const r of results) {
    console.log(`${r.name.padEnd(width)}  ${String(r.status).padStart(6)}  ${String(r.items).padStart(5)}  ${String(r.totalItems ?? 'null').padStart(11)}  ${r.p50.toFixed(1).padStart(6)}  ${r.max.toFixed(1).padStart(7)}`);
  }
  // BENCH_KEEP=1 keeps the seeded store to study its query plans.
  if (process.env.BENCH_KEEP) console.log(`store kept in ${dataDir}`);
  else fs.rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
