/** Worker thread body: composes copies (compose.ts) off the event loop of the delivery loop. */
import { parentPort } from 'node:worker_threads';
import { composeBytes, type ComposeJob } from './compose';

parentPort?.on('message', (msg: { id: number; job: ComposeJob }) => {
  try {
    const bytes = composeBytes({ ...msg.job, raw: Buffer.from(msg.job.raw), secret: Buffer.from(msg.job.secret) });
    parentPort?.postMessage({ id: msg.id, bytes });
  } catch (err) {
    parentPort?.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});
