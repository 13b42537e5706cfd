// evaluateConsent against a real store (openDb on a temp dir): the function the accept path calls
// for every recipient of a consent-requiring sender.
import t from 'tap';
import { openDb, type Db } from '../../../src/store/db';
import { createInstance } from '../../../src/instances/instances';
import { findSenderByEmail } from '../../../src/senders/senders';
import { setSenderPurposes } from '../../../src/store/senders';
import { findPurposeByCode, insertEvent } from '../../../src/store/consent';
import { addTerm, addTermVersion } from '../../../src/consent/catalog';
import { registerEvent } from '../../../src/consent/events';
import { evaluateConsent } from '../../../src/consent/evaluate';

function world(t: { testdir: () => string; teardown: (fn: () => unknown) => void }) {
  const db: Db = openDb(t.testdir());
  t.teardown(() => db.close());
  const inst = createInstance(db, { slug: 'acme' }, 1000);
  const sender = findSenderByEmail(db, inst.id, 'sandbox@acme.sandbox.test');
  if (!sender) throw new Error('no sandbox sender');
  const purpose = (code: string) => (findPurposeByCode(db, inst.id, code) ?? { id: 0 }).id;
  const term = addTerm(db, inst.id, { name: 'T', type: 'marketing', purposeCodes: ['marketing', 'newsletter'], channels: ['mail', 'sms'], isActive: true }, 1000);
  const versioned = addTermVersion(db, inst.id, term.id, { version: 'v1', body: 'B', current: true }, 1000);
  const declare = (...modes: Array<[string, 'opt_in' | 'opt_out']>) =>
    setSenderPurposes(db, inst.id, sender.id, modes.map(([code, mode]) => ({ purposeId: purpose(code), mode })), 1000);
  const consent = (at: number, code: string, action: 'allow' | 'deny', contact: string, contact_type: 'email_address' | 'uniquecode' = 'email_address', channel: 'mail' | 'sms' = 'mail') =>
    registerEvent(db, inst.id, { term_id: term.id, method: 'single_opt_in', rules: [{ channel, contact_type, contact, purpose_id: purpose(code), action }] }, at);
  const evaluate = (email: string) => evaluateConsent(db, inst.id, sender.id, email);
  return { db, inst, sender, term, versionId: versioned.versions[0].id, purpose, declare, consent, evaluate };
}

t.test('each cell of the opt_in / opt_out table', async (t) => {
  const w = world(t);
  w.consent(2000, 'marketing', 'allow', 'granted@example.com');
  w.consent(2000, 'marketing', 'deny', 'revoked@example.com');
  w.declare(['marketing', 'opt_in']);
  t.same(w.evaluate('granted@example.com'), { allowed: true });
  t.match(w.evaluate('revoked@example.com'), { allowed: false, purpose: 'marketing', reason: 'revoked', detail: /purpose marketing \(opt_in\): explicit revocation/ });
  t.same(w.evaluate('none@example.com'), { allowed: false, purpose: 'marketing', reason: 'missing', detail: 'purpose marketing (opt_in): missing required consent' });
  w.declare(['marketing', 'opt_out']);
  t.same(w.evaluate('granted@example.com'), { allowed: true });
  t.match(w.evaluate('revoked@example.com'), { allowed: false, reason: 'revoked', detail: /purpose marketing \(opt_out\): explicit revocation/ });
  t.same(w.evaluate('none@example.com'), { allowed: true });
});

t.test('the address is compared canonically, and only rules on channel mail by email count', async (t) => {
  const w = world(t);
  w.declare(['marketing', 'opt_out']);
  w.consent(2000, 'marketing', 'deny', 'CODE-1', 'uniquecode');
  w.consent(2000, 'marketing', 'deny', 'Mixed@Example.com');
  t.same(w.evaluate('code-1@example.com'), { allowed: true });
  t.equal(w.evaluate(' MIXED@example.COM ').allowed, false, 'stored lowercase, matched whatever the case of the recipient');
  w.declare(['marketing', 'opt_in']);
  w.consent(3000, 'marketing', 'allow', 'g@example.com', 'uniquecode');
  t.equal(w.evaluate('g@example.com').allowed, false, 'a uniquecode grant does not authorize a mail either');
});

t.test('all declared purposes must pass; the failing one is named', async (t) => {
  const w = world(t);
  w.declare(['marketing', 'opt_in'], ['newsletter', 'opt_out']);
  w.consent(2000, 'marketing', 'allow', 'a@example.com');
  t.same(w.evaluate('a@example.com'), { allowed: true });
  w.consent(3000, 'newsletter', 'deny', 'a@example.com');
  t.match(w.evaluate('a@example.com'), { allowed: false, purpose: 'newsletter', reason: 'revoked' });
  t.match(w.evaluate('b@example.com'), { allowed: false, purpose: 'marketing', reason: 'missing' });
});

t.test('precedence at send: the newest rule wins, the same instant denies, a pending grant authorizes nothing', async (t) => {
  const w = world(t);
  w.declare(['marketing', 'opt_in']);
  w.consent(2000, 'marketing', 'allow', 'n@example.com');
  w.consent(3000, 'marketing', 'deny', 'n@example.com');
  t.equal(w.evaluate('n@example.com').allowed, false);
  w.consent(4000, 'marketing', 'allow', 'n@example.com');
  t.equal(w.evaluate('n@example.com').allowed, true, 'a newer grant after the revocation');
  w.consent(5000, 'marketing', 'allow', 's@example.com');
  w.consent(5000, 'marketing', 'deny', 's@example.com');
  w.consent(5000, 'marketing', 'allow', 's@example.com');
  t.match(w.evaluate('s@example.com'), { allowed: false, reason: 'revoked' }, 'contradicting rules of the same instant: deny wins');
  insertEvent(w.db, w.inst.id, { termId: w.term.id, termVersionId: w.versionId, status: 'pending', method: 'double_opt_in', source: 'form', confirmedAt: null, at: 6000,
    rules: [{ channel: 'mail', contactType: 'email_address', contact: 'p@example.com', purposeId: w.purpose('marketing'), action: 'allow' }] });
  t.match(w.evaluate('p@example.com'), { allowed: false, reason: 'missing' });
});

t.test('a sender without declared purposes, and another instance\'s consents, change nothing', async (t) => {
  const w = world(t);
  t.same(w.evaluate('x@example.com'), { allowed: true }, 'no purpose declared: transactional');
  const other = createInstance(w.db, { slug: 'other' }, 1000);
  const otherSender = findSenderByEmail(w.db, other.id, 'sandbox@other.sandbox.test');
  w.declare(['marketing', 'opt_in']);
  w.consent(2000, 'marketing', 'allow', 'x@example.com');
  t.equal(evaluateConsent(w.db, other.id, otherSender?.id ?? 0, 'x@example.com').allowed, true, 'the other sender declares nothing');
  t.equal(evaluateConsent(w.db, other.id, w.sender.id, 'y@example.com').allowed, true, 'a sender id of another instance finds no purposes');
  t.equal(w.evaluate('y@example.com').allowed, false, 'while its own instance requires consent');
});
