import t from 'tap';
import { threadId } from 'node:worker_threads';
import { createWorkerPool, defineTask } from '../../../src/lib/worker-pool';

const tasks = require.resolve('../../helpers/pool-tasks');
const echo = defineTask<{ n: number }, { n: number; thread: number }>(tasks, 'echoThread');
const fail = defineTask<{ why: string }, never>(tasks, 'fail');
const crash = defineTask<Record<string, never>, never>(tasks, 'crash');
const spin = defineTask<{ ms: number }, { endedAt: number }>(tasks, 'spin');

// The pool's threads are unref'd (they must not keep a stopping service alive); in the service
// its listeners keep the event loop alive while a job is in flight, here this timer does.
const keepAlive = setInterval(() => undefined, 1000);
t.teardown(() => clearInterval(keepAlive));

t.test('jobs run on worker threads, each answer to its own job, across several workers', async (t) => {
  const pool = createWorkerPool(2);
  t.teardown(() => pool.close());
  const out = await Promise.all(Array.from({ length: 40 }, (_, n) => pool.run(echo, { n })));
  t.same(out.map((o) => o.n), Array.from({ length: 40 }, (_, n) => n * 2), 'results in the order of their jobs');
  t.notOk(out.some((o) => o.thread === threadId), 'none ran on the main thread');
  t.equal(new Set(out.map((o) => o.thread)).size, 2, 'both workers took jobs');
});

// Jobs posted in one turn cross in one message; their results must not all wait for the last
// job of it: each of four 60 ms jobs on one worker is answered when it is done.
t.test('a long job is answered when it is done, not after the other jobs of its batch', async (t) => {
  const pool = createWorkerPool(1);
  t.teardown(() => pool.close());
  await pool.run(echo, { n: 0 }); // the thread is up
  const arrived: number[] = [];
  const jobs = Array.from({ length: 4 }, (_, i) => pool.run(spin, { ms: 60 }).then((r) => { arrived[i] = Date.now(); return r; }));
  const results = await Promise.all(jobs);
  t.ok(arrived[0] < results[3].endedAt, `the first result arrived (${arrived[0]}) before the last job ended (${results[3].endedAt})`);
  t.ok(arrived[2] < results[3].endedAt, 'so did the third');
});

t.test('a task error rejects its own job only', async (t) => {
  const pool = createWorkerPool(1);
  t.teardown(() => pool.close());
  const [bad, good] = await Promise.allSettled([pool.run(fail, { why: 'bad input' }), pool.run(echo, { n: 1 })]);
  t.match(bad, { status: 'rejected', reason: { message: /bad input/ } });
  t.match(good, { status: 'fulfilled', value: { n: 2 } });
});

t.test('a worker that dies is replaced: later jobs still run', async (t) => {
  const pool = createWorkerPool(1);
  t.teardown(() => pool.close());
  await t.rejects(pool.run(crash, {}), 'the job of the dead worker fails');
  t.same((await pool.run(echo, { n: 5 })).n, 10, 'the next job runs on the replacement');
});

t.test('after close, a job is refused', async (t) => {
  const pool = createWorkerPool(1);
  await pool.run(echo, { n: 1 });
  await pool.close();
  await t.rejects(pool.run(echo, { n: 1 }));
});

t.test('size 0 runs the task inline on the main thread', async (t) => {
  const pool = createWorkerPool(0);
  t.teardown(() => pool.close());
  t.equal((await pool.run(echo, { n: 4 })).thread, threadId);
  await t.rejects(pool.run(fail, { why: 'inline too' }), /inline too/);
});
