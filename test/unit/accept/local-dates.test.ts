// Local dates of the list filters (spec, GET /v1/mails: start_date/end_date read in `tz`):
// where each local day starts, including days whose midnight a clock change skips or repeats.
import t from 'tap';
import { localDayStart } from '../../../src/accept/reports';

const at = (date: string, tz: string): string => new Date(localDayStart(date, tz, 'start_date')).toISOString();

t.test('a day starts at local midnight', async (t) => {
  t.equal(at('2026-03-01', 'UTC'), '2026-03-01T00:00:00.000Z');
  t.equal(at('2026-03-01', 'Europe/Madrid'), '2026-02-28T23:00:00.000Z');
  t.equal(at('2026-07-01', 'Europe/Madrid'), '2026-06-30T22:00:00.000Z', 'summer time');
  t.equal(at('2026-03-01', 'America/New_York'), '2026-03-01T05:00:00.000Z');
  t.equal(at('2026-03-01', 'Pacific/Kiritimati'), '2026-02-28T10:00:00.000Z');
});

t.test('a day whose midnight is skipped starts when its first hour does', async (t) => {
  // Chile moves from -04 to -03 at 00:00 on the first Sunday of September: 00:00 becomes 01:00.
  t.equal(at('2026-09-06', 'America/Santiago'), '2026-09-06T04:00:00.000Z');
  t.equal(at('2026-09-07', 'America/Santiago'), '2026-09-07T03:00:00.000Z');
  t.equal(at('2026-09-05', 'America/Santiago'), '2026-09-05T04:00:00.000Z');
});

t.test('a day whose midnight happens twice starts at the first one', async (t) => {
  // Cuba moves back from -04 to -05 at 01:00 on the first Sunday of November: 00:59 -04 is
  // followed by 00:00 -05, so 1 November has two midnights (04:00Z and 05:00Z).
  t.equal(at('2026-11-01', 'America/Havana'), '2026-11-01T04:00:00.000Z');
  t.equal(at('2026-11-02', 'America/Havana'), '2026-11-02T05:00:00.000Z');
});

t.test('every calendar date of years 1-9999 is a date; others are 400', async (t) => {
  t.equal(at('0001-01-01', 'UTC'), '0001-01-01T00:00:00.000Z', 'not 1901');
  t.equal(at('0099-12-31', 'UTC'), '0099-12-31T00:00:00.000Z');
  t.equal(at('9999-12-31', 'UTC'), '9999-12-31T00:00:00.000Z');
  for (const bad of ['0000-01-01', '2026-02-29', '2026-13-01', '2026-00-10']) {
    t.throws(() => localDayStart(bad, 'UTC', 'start_date'), { code: 'malformed_request' }, bad);
  }
});
