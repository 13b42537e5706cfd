/**
 * Worker threads for composing copies: RSA signing and html rewriting cost most of a delivery's
 * CPU (DESIGN: "sign in a worker thread if the loop saturates"). Jobs go round-robin; when the
 * workers cannot start (or size is 0) the copy is composed inline.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { composeBytes, type ComposeJob } from './compose';

export interface ComposePool { compose(job: ComposeJob): Promise<Buffer>; close(): Promise<void> }

interface Waiting { resolve: (b: Buffer) => void; reject: (e: Error) => void }

export function createComposePool(size: number): ComposePool {
  const script = path.join(__dirname, 'compose-worker.js');
  if (size <= 0 || !fs.existsSync(script)) return { compose: async (job) => composeBytes(job), close: async () => undefined };
  const waiting = new Map<number, Waiting>();
  let next = 0;
  let turn = 0;
  const workers = Array.from({ length: size }, () => {
    const w = new Worker(script);
    w.unref();
    w.on('message', (m: { id: number; bytes?: Uint8Array; error?: string }) => {
      const p = waiting.get(m.id);
      waiting.delete(m.id);
      if (!p) return;
      if (m.bytes) p.resolve(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength));
      else p.reject(new Error(m.error ?? 'compose failed'));
    });
    w.on('error', (err) => {
      for (const p of waiting.values()) p.reject(err);
      waiting.clear();
    });
    return w;
  });
  return {
    compose(job) {
      const id = ++next;
      const w = workers[turn++ % workers.length];
      return new Promise<Buffer>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        w.postMessage({ id, job });
      });
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
