/**
 * The message spool: the bytes of accepted messages under <dataDir>/messages/ (DESIGN.md rule 3:
 * the spool holds bytes, the store holds state). A batch of acceptances is appended to the
 * current segment file in ONE durable (O_DSYNC) write (group commit for the bytes too); a
 * message's reference is `seg-<n>.spool:<offset>:<length>`. See segments.ts for the life cycle.
 */
import fs from 'node:fs';
import path from 'node:path';
import client from 'prom-client';
import { createSegments, isSegment, type SegmentOptions } from './segments';
import { makeDir } from '../lib/paths';

export interface Spool {
  dir: string;
  /** The bytes of a reference as stored in messages.spool_file. */
  read(ref: string): Promise<Buffer>;
  /**
   * Releases a reference whose message is final (or deleted). A legacy file is deleted; a
   * segment is deleted once no live message references it. Resolves after that check.
   */
  remove(ref: string): Promise<void>;
  /**
   * Appends every buffer to the current segment in one durable write, then runs `commit` with their
   * references (synchronously, so the rows are visible before any reclaim can run). Appends
   * are serialized. Bytes of a commit that throws are unreferenced garbage.
   */
  append<T>(items: Buffer[], commit: (refs: string[]) => T): Promise<T>;
  /** Names of the files in the spool (segments and legacy per-message files). */
  list(): Promise<string[]>;
  /** Start-up sweep: removes temporary files and every file no live message references. */
  sweep(): Promise<{ temporary: number; orphans: number }>;
}

export interface SpoolOptions extends Partial<SegmentOptions> {
  /**
   * Whether a message still to deliver (messages.pending > 0) keeps bytes in this file, asked of
   * the store by the composition root so the spool does not depend on it. Without it the spool
   * never reclaims a segment (a reader such as a test or the MX door's DSN handling).
   */
  live?: (file: string) => boolean;
  /** Where to count flushes and the messages they carried (messages per flush = group commit). */
  registry?: client.Registry;
}

function flushCounter(registry: client.Registry): (messages: number, bytes: number) => void {
  const flushes = new client.Counter({ name: 'estafeta_spool_flushes_total', help: 'Spool segment flushes (one durable O_DSYNC write each)', registers: [registry] });
  const messages = new client.Counter({ name: 'estafeta_spool_messages_total', help: 'Messages made durable by those flushes', registers: [registry] });
  const bytes = new client.Counter({ name: 'estafeta_spool_bytes_total', help: 'Bytes appended to spool segments', registers: [registry] });
  return (m, b) => {
    flushes.inc();
    messages.inc(m);
    bytes.inc(b);
  };
}

const tmpPrefix = '.tmp-';
/** One spool per directory and process: a second open shares the writer's state. */
const open = new Map<string, Spool>();

/** `seg-000012.spool:4096:2210` → segment, offset, length; a ref without ':' is a whole file. */
export function parseRef(ref: string): { file: string; offset: number; length: number } | { file: string; offset?: undefined; length?: undefined } {
  const parts = ref.split(':');
  if (parts.length !== 3) return { file: ref };
  return { file: parts[0], offset: Number(parts[1]), length: Number(parts[2]) };
}

/**
 * Read descriptors of the most recently read segments, kept open: delivery reads every message
 * of a segment in turn, and an open + close per mail was the largest event-loop cost of a
 * delivery (profile of `npm run bench`). Reads are positional (pread on the thread pool); a
 * descriptor is closed when evicted or when its segment is deleted, once no read uses it.
 */
function createReaders(pathOf: (file: string) => string, keep = 8) {
  interface Reader { fd: number; busy: number; closed: boolean }
  const byFile = new Map<string, Reader>(); // insertion order = least recently used first
  const closeIfIdle = (r: Reader): void => {
    if (r.busy === 0 && !r.closed) {
      r.closed = true;
      fs.close(r.fd, () => undefined);
    }
  };
  const drop = (file: string): void => {
    const r = byFile.get(file);
    if (!r) return;
    byFile.delete(file);
    closeIfIdle(r);
  };
  const acquire = async (file: string): Promise<Reader> => {
    let r = byFile.get(file);
    if (r) {
      byFile.delete(file); // refresh its place in the LRU order
    } else {
      const fd = await new Promise<number>((resolve, reject) => fs.open(pathOf(file), 'r', (err, f) => (err ? reject(err) : resolve(f))));
      r = byFile.get(file) ?? { fd, busy: 0, closed: false }; // another read may have opened it meanwhile
      if (r.fd !== fd) fs.close(fd, () => undefined);
    }
    byFile.set(file, r);
    r.busy++;
    while (byFile.size > keep) drop(byFile.keys().next().value as string);
    return r;
  };
  return {
    async read(file: string, offset: number, length: number, ref: string): Promise<Buffer> {
      const r = await acquire(file);
      try {
        const buf = Buffer.allocUnsafe(length);
        let done = 0;
        while (done < length) {
          const n = await new Promise<number>((resolve, reject) => fs.read(r.fd, buf, done, length - done, offset + done, (err, bytes) => (err ? reject(err) : resolve(bytes))));
          if (n === 0) throw new Error(`spool reference ${ref} runs past the end of its segment`);
          done += n;
        }
        return buf;
      } finally {
        r.busy--;
        if (!byFile.has(file) || byFile.get(file) !== r) closeIfIdle(r); // evicted or deleted meanwhile
      }
    },
    forget: drop,
  };
}

export function openSpool(dataDir: string, options: SpoolOptions = {}): Spool {
  const dir = path.join(dataDir, 'messages');
  const existing = open.get(dir);
  // A new writer (a service started again in the same process) replaces the old one.
  if (existing && !options.live) return existing;
  makeDir(dir, 0o700); // messages are the owner's alone, like the store
  // Segments are created at the first send: a directory the service cannot write in must stop the
  // start (naming the data dir), not pass /healthz and then refuse every send with a 503.
  fs.accessSync(dir, fs.constants.W_OK);
  const pathOf = (file: string): string => path.join(dir, path.basename(file));
  const segments = createSegments(dir, {
    segmentBytes: options.segmentBytes ?? 32 * 1024 * 1024,
    gcIntervalMs: options.gcIntervalMs ?? 1000,
    onFlush: options.onFlush ?? (options.registry ? flushCounter(options.registry) : undefined),
    onRemove: (name) => readers.forget(name),
  }, options.live);

  const readers = createReaders(pathOf);
  const read = async (ref: string): Promise<Buffer> => {
    if (ref === '') throw new Error('this message kept no bytes in the spool');
    const r = parseRef(ref);
    if (r.offset === undefined) return fs.promises.readFile(pathOf(r.file));
    return readers.read(r.file, r.offset, r.length, ref);
  };

  const sweep = async (): Promise<{ temporary: number; orphans: number }> => {
    const names = await fs.promises.readdir(dir);
    const tmps = names.filter((f) => f.startsWith(tmpPrefix));
    await Promise.all(tmps.map((f) => fs.promises.rm(pathOf(f), { force: true })));
    if (!options.live) return { temporary: tmps.length, orphans: 0 };
    const orphans = await segments.reclaim(names.filter((f) => !f.startsWith(tmpPrefix)));
    return { temporary: tmps.length, orphans };
  };

  const spool: Spool = {
    dir,
    read,
    remove: async (ref) => {
      if (ref === '') return; // a message that kept no bytes (every recipient dropped)
      const r = parseRef(ref);
      if (r.offset === undefined && !isSegment(r.file)) return fs.promises.rm(pathOf(r.file), { force: true });
      return segments.released();
    },
    append: (items, commit) => segments.append(items, commit),
    list: async () => (await fs.promises.readdir(dir)).filter((f) => !f.startsWith(tmpPrefix)),
    sweep,
  };
  open.set(dir, spool);
  return spool;
}
