/** Tasks for the worker-pool unit test: pure functions a worker thread runs by module and name. */
import { threadId } from 'node:worker_threads';

export function echoThread(input: { n: number }): { n: number; thread: number } {
  return { n: input.n * 2, thread: threadId };
}

export function fail(input: { why: string }): never {
  throw new Error(input.why);
}

/** Kills the worker that runs it, as a native crash would. */
export function crash(): never {
  process.exit(3);
}

/** Keeps its thread busy for `ms` (a CPU-bound job, like signing a copy); says when it ended. */
export function spin(input: { ms: number }): { endedAt: number } {
  const until = Date.now() + input.ms;
  while (Date.now() < until) { /* busy */ }
  return { endedAt: Date.now() };
}
