// When the scheduler looks at the queue again (src/delivery/scheduler.ts, nextScanDelay).
import t from 'tap';
import { nextScanDelay } from '../../../src/delivery/scheduler';

const base = { now: 10_000, lastScanAt: 9_000, bufferHasRoom: true, scanGapMs: 10 };

t.test('a due time ahead is waited for exactly, at most 30 s; an empty queue is polled every 30 s', async (t) => {
  t.equal(nextScanDelay({ ...base, next: 13_000 }), 3_000);
  t.equal(nextScanDelay({ ...base, next: 100_000 }), 30_000);
  t.equal(nextScanDelay({ ...base, next: null }), 30_000);
});

t.test('a mail that fell due after the last scan read the clock is scanned at once, not a second later', async (t) => {
  // The retry timer fired on the loop's cached clock: the scan read 9,999 and found nothing due
  // at 10,000; by the time the timer is armed again, it is 10,000.
  t.equal(nextScanDelay({ ...base, lastScanAt: 9_999, next: 10_000 }), 10, 'after the scan gap only');
});

t.test('a mail already due at the last scan waits for room in the buffer: the slow poll', async (t) => {
  t.equal(nextScanDelay({ ...base, lastScanAt: 10_000, next: 9_500 }), 1_000);
  t.equal(nextScanDelay({ ...base, lastScanAt: 9_000, next: 9_500, bufferHasRoom: false }), 1_000, 'no scan can run while the buffer is full');
});
