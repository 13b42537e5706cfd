import t from 'tap';
import { mailLogs, mailState, startWorld } from '../helpers/delivery-world';
import { waitFor } from '../helpers/service';
import { openDb } from '../../src/store/db';

// CONTRACT §1: a stop finishes the delivery attempts in flight and starts no new one. Two
// destinations whose MX is one host share its connections (ESTAFETA_DESTINATION_CONCURRENCY per
// host): a mail waiting for that host's connection has not started, and must not start once the
// connection frees after the stop (it did: the stop then took the whole bound, and a restart
// delivered such mails twice when the first copy had gone out during the stop).
t.test('a stop lets a delivery under way finish and starts none that waited for a shared MX connection', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const w = await startWorld(t, {
    script: { gate },
    env: { ESTAFETA_DESTINATION_CONCURRENCY: '1' },
    zone: { 'other.test': { MX: [{ exchange: 'mx.example.test', priority: 10 }] } },
  });
  const first = await w.send(['ana@example.test']);
  await waitFor(() => w.sink.stats.held === 1, { what: 'the first delivery in DATA' });
  const waiting = await w.send(['bo@other.test']);
  const claimed = () => (w.ts.svc.db.prepare('SELECT claimed_at FROM mails WHERE mail_id = ?').get(waiting.mailIds[0]) as { claimed_at: number | null }).claimed_at;
  await waitFor(() => claimed() !== null, { what: 'the second mail taken by the delivery loop' });

  const stopped = w.ts.stop();
  release(); // the first delivery ends after the stop began: its connection is free again
  await stopped;

  t.equal(w.sink.stats.attempts, 1, 'one MAIL FROM: nothing started after the stop');
  t.equal(w.sink.received.length, 1, 'the delivery under way finished');
  const db = openDb(w.ts.dataDir);
  t.teardown(() => db.close());
  t.equal(mailState({ db }, first.mailIds[0]).status, 3, 'and its outcome was written');
  t.equal(mailState({ db }, waiting.mailIds[0]).status, 2, 'the waiting mail is still queued');
  t.same(mailLogs({ db }, waiting.mailIds[0]), [], 'with no attempt in its log');
});
