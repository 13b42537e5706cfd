/**
 * The body of an activity export: every row of a list query (no pages, at most `exportRowCap`),
 * read from a store reader and written as RFC 4180 CSV or a JSON array while the client reads, so
 * memory stays flat whatever the size.
 *
 * The reader is one read transaction, and a read transaction stops the WAL from being checkpointed
 * back to its start: a client paced slower than the export would let the WAL grow under load for
 * as long as it reads. So the snapshot is leased: a client still reading when the lease ends gets
 * the rest from a temp file, which the remaining rows are written to at the disk's pace, after
 * which the reader closes. The client sees the same bytes, from the same snapshot.
 * The reader also closes when the stream is destroyed (client gone).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Reader } from '../store/reader';
import type { ListQuery } from '../store/page';

export type ExportFormat = 'csv' | 'json';

/** The hard cap of one export (documented in docs/reports.md): narrow the window to get the rest. */
export const exportRowCap = 100_000;

/** How long an export reads from its snapshot at the client's pace before spilling the rest. */
export const snapshotLeaseMs = 2_000;

/** Rows per chunk pushed to the stream: enough to amortize, small enough not to hold the loop. */
const rowsPerChunk = 256;

/** Bytes per read of the spill file. */
const spillReadBytes = 64 * 1024;

/**
 * One CSV cell (RFC 4180 §2): quoted when it holds a comma, quote, CR or LF, quotes doubled. A text
 * starting with = + - @ (or tab, CR) is prefixed with ' so a spreadsheet does not run it as a
 * formula (OWASP CSV injection). null is an empty cell.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'string' ? v : String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;

export interface ExportSpec<Row> {
  query: ListQuery;
  present: (row: Row) => Record<string, unknown>;
  /** The item fields, in order: the CSV header and column order. */
  columns: string[];
  format: ExportFormat;
}

export interface ExportOptions {
  /** Where the spill file is created (and at once unlinked: nothing is left behind by a crash). */
  spillDir: string;
  /** Tests shorten it. */
  leaseMs?: number;
}

/** The rest of an export written ahead of the client: bytes [readPos, writePos) are still to send. */
interface Spill {
  fd: number;
  writePos: number;
  readPos: number;
  written: boolean;
  reading: boolean;
}

class ExportStream<Row> extends Readable {
  private rows: IterableIterator<Row> | null = null;
  private count = 0;
  private released = false;
  private lease: NodeJS.Timeout | null = null;
  private spill: Spill | null = null;
  /** The consumer asked for bytes the spill did not have yet (it is only pushed to when it asks). */
  private wanted = false;

  constructor(private readonly reader: Reader, private readonly spec: ExportSpec<Row>, private readonly opts: ExportOptions) {
    super();
  }

  override _read(): void {
    if (this.spill) {
      this.wanted = true;
      return this.readSpill();
    }
    const chunk = this.nextChunk();
    this.push(chunk.text);
    if (chunk.done) this.push(null);
  }

  /** The next rows as text; `done` when the rows ran out (the closing text is included, the reader released). */
  private nextChunk(): { text: string; done: boolean } {
    const { format, columns, present } = this.spec;
    let text = '';
    if (!this.rows) {
      this.rows = this.reader.iterate<Row>(this.spec.query, exportRowCap);
      text = format === 'csv' ? csvLine(columns) : '[';
      this.lease = setTimeout(() => this.startSpill(), this.opts.leaseMs ?? snapshotLeaseMs);
      this.lease.unref();
    }
    for (let i = 0; i < rowsPerChunk; i++) {
      const next = this.rows.next();
      if (next.done) {
        this.release();
        return { text: format === 'json' ? `${text}]` : text, done: true };
      }
      const item = present(next.value);
      text += format === 'csv' ? csvLine(columns.map((c) => item[c])) : `${this.count ? ',' : ''}${JSON.stringify(item)}`;
      this.count++;
    }
    return { text, done: false };
  }

  /** The lease ended with rows left: from now on they go to a file, one chunk per turn of the loop. */
  private startSpill(): void {
    this.lease = null;
    if (this.released || this.destroyed) return;
    const file = path.join(this.opts.spillDir, `.export-${randomUUID()}.tmp`);
    let fd: number;
    try {
      fd = fs.openSync(file, 'wx+', 0o600);
    } catch {
      return; // no room for a spill: the export goes on from the snapshot, as before the lease
    }
    try {
      fs.unlinkSync(file);
    } catch {
      fs.closeSync(fd);
      fs.rmSync(file, { force: true });
      return;
    }
    this.spill = { fd, writePos: 0, readPos: 0, written: false, reading: false };
    this.spillChunk();
  }

  private spillChunk(): void {
    const spill = this.spill;
    if (!spill || this.destroyed) return;
    let chunk: { text: string; done: boolean };
    try {
      chunk = this.nextChunk();
      const bytes = Buffer.from(chunk.text);
      fs.writeSync(spill.fd, bytes, 0, bytes.length, spill.writePos);
      spill.writePos += bytes.length;
    } catch (err) {
      this.destroy(err as Error);
      return;
    }
    if (chunk.done) spill.written = true;
    else setImmediate(() => this.spillChunk());
    this.readSpill(); // a read may be waiting for these bytes
  }

  private readSpill(): void {
    const spill = this.spill;
    if (!spill || !this.wanted || spill.reading || this.destroyed) return;
    const n = Math.min(spillReadBytes, spill.writePos - spill.readPos);
    if (n === 0) {
      if (spill.written) this.push(null);
      return; // spillChunk calls again when it wrote more
    }
    spill.reading = true;
    fs.read(spill.fd, Buffer.allocUnsafe(n), 0, n, spill.readPos, (err, got, buf) => {
      spill.reading = false;
      if (this.destroyed) return this.closeSpill();
      if (err) return void this.destroy(err);
      spill.readPos += got;
      this.wanted = this.push(buf.subarray(0, got));
      this.readSpill();
    });
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.release();
    if (this.spill && !this.spill.reading) this.closeSpill(); // else the read's callback closes it
    cb(err);
  }

  private closeSpill(): void {
    if (!this.spill) return;
    fs.close(this.spill.fd, () => undefined);
    this.spill = null;
  }

  private release(): void {
    if (this.lease) clearTimeout(this.lease);
    this.lease = null;
    if (this.released) return;
    this.released = true;
    this.rows?.return?.(); // ends the statement before its connection closes
    this.reader.close();
  }
}

/** The stream of an export; takes ownership of `reader`. */
export function exportStream<Row>(reader: Reader, spec: ExportSpec<Row>, opts: ExportOptions): Readable {
  return new ExportStream(reader, spec, opts);
}
