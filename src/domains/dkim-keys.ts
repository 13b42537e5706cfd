/**
 * DKIM key pairs: two per domain (s1 active, s2 standby), RSA-2048, stored in the store under
 * the data dir and never returned by the API. Rotation makes the standby active and replaces the
 * old active with a fresh standby: mail is signed at delivery with whichever is active then.
 */
import crypto from 'node:crypto';
import type { Db } from '../store/db';
import { dkimKeys, setActiveSelector, upsertDkimKey, type DkimKeyRow } from '../store/domains';

export type Selector = 's1' | 's2';

export interface KeyPair { privateKey: string; publicKey: string }

export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: spki.toString('base64') };
}

/**
 * A domain's two key pairs (s1 active, s2 standby). Generated before the transaction that stores
 * them: two RSA-2048 keys take ~200 ms, and the write lock held meanwhile would stall every
 * commit of a running server (the CLI writes while it runs).
 */
export type DomainKeys = { s1: KeyPair; s2: KeyPair };
export const generateDomainKeys = (): DomainKeys => ({ s1: generateKeyPair(), s2: generateKeyPair() });

export function storeDomainKeys(db: Db, domainId: number, keys: DomainKeys, at: number): void {
  for (const selector of ['s1', 's2'] as const) {
    upsertDkimKey(db, domainId, { selector, ...keys[selector], active: selector === 's1', at });
  }
}

export function rotateDomainKeys(db: Db, domainId: number, at: number): void {
  const fresh = generateKeyPair(); // outside the write lock (see generateDomainKeys)
  db.transaction(() => {
    // Read under the lock: two concurrent rotations make two steps, not the same one twice.
    const active = dkimKeys(db, domainId).find((k) => k.is_active)?.selector ?? 's1';
    const next: Selector = active === 's1' ? 's2' : 's1';
    setActiveSelector(db, domainId, next);
    upsertDkimKey(db, domainId, { selector: active, ...fresh, active: false, at });
  })();
}

/** The TXT value published at a selector's CNAME target. */
export const dkimTxt = (key: Pick<DkimKeyRow, 'public_key'>): string => `v=DKIM1; k=rsa; p=${key.public_key}`;
