/**
 * Worker thread body of worker-pool.ts: runs the tasks the jobs name, one after another, and
 * posts their results back.
 *
 * Results are held and posted together (a message wakes the event loop's thread, and under load
 * the wake-ups are what a hand-off costs), but never for long: once the results held have waited
 * `maxHoldMs` (counted from the start of the first one's job) they leave at once, and whatever is
 * held leaves when the queue runs dry. Answering a whole message's jobs at its end made each of a
 * batch of delivery copies (~0.6 ms of RSA signing each) wait for the last: ten copies in flight
 * waited ~6 ms each, and the delivery bench fell from ~1,060 to ~790 mails/s.
 */
import { parentPort } from 'node:worker_threads';
import { taskFunction, type JobMessage, type ResultMessage } from './worker-pool';

const maxHoldMs = 0.5;

const queue: JobMessage[] = [];
let running = false;
let held: ResultMessage[] = [];
let heldSince = 0;

function post(): void {
  if (held.length === 0) return;
  const out = held;
  held = [];
  parentPort?.postMessage(out);
}

function settle(result: ResultMessage, startedAt: number): void {
  if (held.length === 0) heldSince = startedAt;
  held.push(result);
  if (performance.now() - heldSince >= maxHoldMs) post();
}

async function drain(): Promise<void> {
  running = true;
  try {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const startedAt = performance.now();
      try {
        settle({ id: job.id, output: await taskFunction(job.module, job.name)(job.input) }, startedAt);
      } catch (err) {
        settle({ id: job.id, error: err instanceof Error ? err.message : String(err) }, startedAt);
      }
    }
  } finally {
    running = false;
    post();
  }
}

parentPort?.on('message', (jobs: JobMessage[]) => {
  queue.push(...jobs);
  if (!running) void drain();
});
