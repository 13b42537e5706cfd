/**
 * One pool of worker threads for the pure CPU work of the pipeline: composing delivery copies
 * (tracking, DKIM) and building the MIME of HTTP sends. The event loop is the service's
 * bottleneck; work that needs neither the store nor the spool runs here.
 *
 * A task names the compiled module and the export that runs it (`defineTask(__filename, 'fn')`),
 * so this leaf module knows no domain code and every area keeps its own task beside its rules.
 * A task takes and returns structured-clonable data (a Buffer arrives as a Uint8Array) and does
 * not throw expected errors: it returns data, and the caller decides. Each job goes to the
 * worker with the fewest jobs in flight. Jobs posted in one turn of the event loop cross in one
 * message, and results come back a few at a time (worker.ts): a message wakes the other thread,
 * and under load the wake-ups, not the copies, are what a hand-off costs. When the workers cannot start (size 0, or the sources
 * run uncompiled) a task runs inline, on the event loop, with the same input.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** A pure function `name` exported by the module at `module` (an absolute path); `io` only carries the types. */
export interface Task<I, O> { readonly module: string; readonly name: string; readonly io?: (input: I) => O }

export const defineTask = <I, O>(module: string, name: string): Task<I, O> => ({ module, name });

export interface WorkerPool {
  run<I, O>(task: Task<I, O>, input: I): Promise<O>;
  close(): Promise<void>;
}

/** What the worker body (worker.ts) receives and answers, in arrays (one message per turn). */
export interface JobMessage { id: number; module: string; name: string; input: unknown }
export type ResultMessage = { id: number; output: unknown } | { id: number; error: string };

/** Collects items posted in one turn of the event loop and hands them to `send` as one array. */
export function batcher<T>(send: (items: T[]) => void): (item: T) => void {
  let items: T[] = [];
  const flush = (): void => {
    const out = items;
    items = [];
    send(out);
  };
  return (item) => {
    if (items.push(item) === 1) setImmediate(flush);
  };
}

type TaskFn = (input: unknown) => unknown;

/** Resolves a task's function (require caches the module); used inline and by worker.ts. */
export function taskFunction(module: string, name: string): TaskFn {
  const fn = (require(module) as Record<string, unknown>)[name];
  if (typeof fn !== 'function') throw new Error(`task ${name} not exported by ${module}`);
  return fn as TaskFn;
}

interface Waiting { resolve: (v: unknown) => void; reject: (e: Error) => void }
interface Slot { worker: Worker; waiting: Map<number, Waiting>; post: (job: JobMessage) => void; online: boolean; dead: boolean }

function inlinePool(): WorkerPool {
  return {
    run: async <I, O>(task: Task<I, O>, input: I) => (await taskFunction(task.module, task.name)(input)) as O,
    close: async () => undefined,
  };
}

/** A worker and its jobs in flight; `onExit` runs when the thread ends, after its jobs failed. */
function startSlot(script: string, onExit: () => void): Slot {
  const worker = new Worker(script);
  const slot: Slot = { worker, waiting: new Map(), post: batcher((jobs: JobMessage[]) => worker.postMessage(jobs)), online: false, dead: false };
  const failAll = (err: Error): void => {
    for (const p of slot.waiting.values()) p.reject(err);
    slot.waiting.clear();
  };
  slot.worker.unref();
  slot.worker.once('online', () => (slot.online = true));
  slot.worker.on('message', (results: ResultMessage[]) => {
    for (const m of results) {
      const p = slot.waiting.get(m.id);
      slot.waiting.delete(m.id);
      if (!p) continue;
      if ('error' in m) p.reject(new Error(m.error));
      else p.resolve(m.output);
    }
  });
  slot.worker.on('error', failAll);
  slot.worker.on('exit', (code) => {
    slot.dead = true;
    failAll(new Error(`worker thread exited (${code})`));
    onExit();
  });
  return slot;
}

export function createWorkerPool(size: number): WorkerPool {
  const script = path.join(__dirname, 'worker.js');
  const inline = inlinePool();
  if (size <= 0 || !fs.existsSync(script)) return inline;
  let next = 0;
  let closed = false;
  // A thread that died after it started (a crash in a task) is replaced; one that could not
  // start is not retried: its jobs go to the others, or run inline when none is left.
  const start = (i: number): Slot => startSlot(script, () => {
    if (!closed && slots[i].online) slots[i] = start(i);
  });
  const slots = Array.from({ length: size }, (_, i) => start(i));
  return {
    run<I, O>(task: Task<I, O>, input: I): Promise<O> {
      if (closed) return Promise.reject(new Error('the worker pool is closed'));
      const live = slots.filter((s) => !s.dead);
      if (live.length === 0) return inline.run(task, input);
      const id = ++next;
      const slot = live.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a));
      return new Promise<O>((resolve, reject) => {
        slot.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        slot.post({ id, module: task.module, name: task.name, input });
      });
    },
    async close() {
      closed = true;
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}

/** A Uint8Array that crossed a thread (or a Buffer that did not) as a Buffer, without a copy. */
export const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
