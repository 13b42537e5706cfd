import t from 'tap';
import { randomBytes, randomHex, randomToken } from '../../../src/lib/tokens';

t.test('tokens are lowercase base32 of the asked length, and never repeat', async (t) => {
  const seen = new Set<string>();
  // More than one 4 KiB pool's worth, so refills are crossed.
  for (let i = 0; i < 2000; i++) {
    const token = randomToken(16);
    t.match(token, /^[a-z2-7]{16}$/);
    seen.add(token);
  }
  t.equal(seen.size, 2000);
  t.match(randomToken(5000), /^[a-z2-7]{5000}$/, 'longer than the pool');
});

t.test('random bytes are handed out once: two draws differ and are their own buffers', async (t) => {
  const a = randomBytes(32);
  const b = randomBytes(32);
  t.equal(a.length, 32);
  t.not(a.toString('hex'), b.toString('hex'));
  t.equal(a.buffer === b.buffer && a.byteOffset + 32 > b.byteOffset && b.byteOffset + 32 > a.byteOffset, false, 'no shared bytes');
  t.match(randomHex(16), /^[0-9a-f]{32}$/);
});
