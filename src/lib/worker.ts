/** Worker thread body of worker-pool.ts: runs the tasks the jobs name and posts their results back. */
import { parentPort } from 'node:worker_threads';
import { batcher, taskFunction, type JobMessage, type ResultMessage } from './worker-pool';

const answer = batcher((results: ResultMessage[]) => parentPort?.postMessage(results));

parentPort?.on('message', (jobs: JobMessage[]) => {
  for (const job of jobs) {
    Promise.resolve()
      .then(() => taskFunction(job.module, job.name)(job.input))
      .then(
        (output) => answer({ id: job.id, output }),
        (err: unknown) => answer({ id: job.id, error: err instanceof Error ? err.message : String(err) }),
      );
  }
});
