/**
 * Composing copies off the event loop: RSA signing and html rewriting cost most of a delivery's
 * CPU (DESIGN: "sign in a worker thread if the loop saturates"). The threads are the service's
 * one worker pool (lib/worker-pool.ts), shared with the accept path.
 */
import { asBuffer, defineTask, type WorkerPool } from '../lib/worker-pool';
import { composeBytes, type ComposeJob } from './compose';

export interface ComposePool { compose(job: ComposeJob): Promise<Buffer> }

/** The worker task: the job crossed a thread, so its Buffers arrive as Uint8Arrays. */
export function composeCopy(job: ComposeJob): Buffer {
  return composeBytes({ ...job, raw: asBuffer(job.raw), secret: asBuffer(job.secret) });
}

const composeTask = defineTask<ComposeJob, Uint8Array>(__filename, 'composeCopy');

export function createComposePool(workers: WorkerPool): ComposePool {
  return { compose: async (job) => asBuffer(await workers.run(composeTask, job)) };
}
