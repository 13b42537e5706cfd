/**
 * Append-only segment files `seg-<n>.spool`. One writer appends batches to the current segment
 * (one O_DSYNC write per batch: durable when it returns); a new segment (and one directory
 * fsync) starts past a size threshold. A segment is deleted once no live message references it and no batch is in flight
 * into it; bytes of batches that never committed go with it. Per-file fsync tops out at a few
 * thousand files/s (DESIGN.md); one flush per batch does not.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface SegmentOptions {
  /** Size past which the next batch starts a new segment. */
  segmentBytes: number;
  /** Minimum time between two reclaim passes (each one reads the live references). */
  gcIntervalMs: number;
  /** Called after each flush (one durable write) with the messages and bytes it made durable. */
  onFlush?: (messages: number, bytes: number) => void;
  /** Called for each file a reclaim deletes (the spool closes its read descriptor). */
  onRemove?: (name: string) => void;
}

export interface Segments {
  append<T>(items: Buffer[], commit: (refs: string[]) => T): Promise<T>;
  /** A reference was released: schedules a reclaim pass; resolves once it ran. */
  released(): Promise<void>;
  /** Deletes every listed file (segment or legacy) that no live reference needs; returns how many. */
  reclaim(names: string[]): Promise<number>;
}

const segmentName = /^seg-(\d+)\.spool$/;
export const isSegment = (name: string): boolean => segmentName.test(name);

interface Current { name: string; fh: fs.promises.FileHandle; size: number }

export function createSegments(dir: string, o: SegmentOptions, live?: (file: string) => boolean): Segments {
  // Numbers only grow: a restart never appends after a crashed batch's torn tail.
  let next = 1 + fs.readdirSync(dir).reduce((max, f) => Math.max(max, Number(segmentName.exec(f)?.[1] ?? 0)), 0);
  let current: Current | null = null;
  // The segment being created: its file exists before `current` names it (open resolves on a
  // later turn), and a reclaim pass listing the directory in between must not take it for garbage.
  let creating: string | null = null;
  let busy = false;
  let chain: Promise<unknown> = Promise.resolve();

  const syncDir = async (): Promise<void> => {
    const fh = await fs.promises.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  };

  /** Leaves the current segment as an ordinary one (reclaimed like the others). */
  const detach = (): void => {
    const c = current;
    current = null;
    c?.fh.close().catch(() => undefined);
  };

  const start = async (): Promise<Current> => {
    const name = `seg-${String(next++).padStart(6, '0')}.spool`;
    // O_DSYNC: each write returns once its bytes are on disk (an fdatasync folded into the write),
    // one thread-pool round trip per batch instead of two: the commit cycle is the accept latency.
    const { O_WRONLY, O_CREAT, O_EXCL, O_DSYNC } = fs.constants;
    creating = name;
    let fh: fs.promises.FileHandle;
    try {
      fh = await fs.promises.open(path.join(dir, name), O_WRONLY | O_CREAT | O_EXCL | O_DSYNC, 0o600);
    } finally {
      creating = null;
    }
    const seg: Current = { name, fh, size: 0 };
    current = seg;
    try {
      await syncDir(); // the new name itself must survive a crash
    } catch (err) {
      detach();
      throw err;
    }
    return seg;
  };

  const write = async <T>(items: Buffer[], commit: (refs: string[]) => T): Promise<T> => {
    if (items.length === 0) return commit([]); // nothing to make durable (every recipient dropped)
    busy = true;
    try {
      if (current && current.size >= o.segmentBytes) {
        detach();
        void released();
      }
      const seg = current ?? (await start());
      const bytes = items.length === 1 ? items[0] : Buffer.concat(items);
      const refs: string[] = [];
      let offset = seg.size;
      for (const b of items) {
        refs.push(`${seg.name}:${offset}:${b.length}`);
        offset += b.length;
      }
      try {
        let done = 0;
        while (done < bytes.length) done += (await seg.fh.write(bytes, done, bytes.length - done, seg.size + done)).bytesWritten;
      } catch (err) {
        // The segment's tail is unknown now: never append after it.
        if (current === seg) detach();
        throw err;
      }
      seg.size = offset;
      o.onFlush?.(items.length, bytes.length);
      return commit(refs); // synchronous: the rows are visible before `busy` drops
    } finally {
      busy = false;
    }
  };

  /** Whether the file must stay; a store that cannot answer (closed at stop) keeps everything. */
  const keeps = (file: string): boolean => {
    try {
      return live ? live(file) : true;
    } catch {
      return true;
    }
  };

  const reclaim = async (names: string[]): Promise<number> => {
    if (!live) return 0;
    const doomed = names.filter((n) => {
      if (n === creating || (current && n === current.name && busy)) return false;
      if (keeps(n)) return false;
      if (current && n === current.name) detach();
      return true;
    });
    await Promise.all(doomed.map(async (n) => {
      await fs.promises.rm(path.join(dir, n), { force: true });
      o.onRemove?.(n);
    }));
    return doomed.length;
  };

  let scheduled: Promise<void> | null = null;
  let lastPass = 0;
  const released = (): Promise<void> => {
    if (!live) return Promise.resolve();
    scheduled ??= new Promise<void>((resolve) => {
      setTimeout(() => {
        scheduled = null;
        lastPass = Date.now();
        // Only segments: a legacy file is removed by its own reference.
        fs.promises.readdir(dir).then((names) => reclaim(names.filter(isSegment))).catch(() => undefined).finally(resolve);
      }, Math.max(0, lastPass + o.gcIntervalMs - Date.now())); // ref'd: a caller may await it (purge)
    });
    return scheduled;
  };

  return {
    append: (items, commit) => {
      const run = chain.then(() => write(items, commit));
      chain = run.catch(() => undefined);
      return run;
    },
    released,
    reclaim,
  };
}
