// Spec, POST /v1/mails/send: the category is "normalized to a slug (accents folded, lowercased,
// any other character collapsed to -)"; one with no letter or digit is rejected (null here).
import t from 'tap';
import { categorySlug } from '../../../src/accept/validate';

t.test('accents folded, lowercased, other runs collapsed to one hyphen, none at the ends', async (t) => {
  t.equal(categorySlug('Promoción  Verano!'), 'promocion-verano');
  t.equal(categorySlug('  Café / Crème -- 2026 '), 'cafe-creme-2026');
  t.equal(categorySlug('ÀÉÎÕÜ ñ ç'), 'aeiou-n-c');
  t.equal(categorySlug('under_score.dot'), 'under-score-dot');
});

t.test('letters and digits of every script count', async (t) => {
  t.equal(categorySlug('Новости'), 'новости');
  t.equal(categorySlug('日本 ニュース'), '日本-ニュース');
  t.equal(categorySlug('Straße'), 'straße');
  t.equal(categorySlug('١٢٣'), '١٢٣', 'Arabic-Indic digits');
});

t.test('nothing but symbols, spaces and marks is no category', async (t) => {
  for (const none of ['--- !!', '   ', '\u0301\u0301', '🙂🙂', '']) t.equal(categorySlug(none), null, JSON.stringify(none));
});
