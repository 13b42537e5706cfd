/**
 * The body of an activity export: every row of a list query (no pages, at most `exportRowCap`),
 * read from a store reader one row at a time and written as RFC 4180 CSV or a JSON array while
 * the client reads, so memory stays flat whatever the size. The reader closes when the stream
 * ends or is destroyed (client gone), whichever comes first.
 */
import { Readable } from 'node:stream';
import type { Reader } from '../store/reader';
import type { ListQuery } from '../store/page';

export type ExportFormat = 'csv' | 'json';

/** The hard cap of one export (documented in docs/reports.md): narrow the window to get the rest. */
export const exportRowCap = 100_000;

/** Rows per chunk pushed to the stream: enough to amortize, small enough not to hold the loop. */
const rowsPerChunk = 256;

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

class ExportStream<Row> extends Readable {
  private rows: IterableIterator<Row> | null = null;
  private count = 0;
  private released = false;

  constructor(private readonly reader: Reader, private readonly spec: ExportSpec<Row>) {
    super();
  }

  override _read(): void {
    const { format, columns, present } = this.spec;
    let chunk = '';
    if (!this.rows) {
      this.rows = this.reader.iterate<Row>(this.spec.query, exportRowCap);
      chunk = format === 'csv' ? csvLine(columns) : '[';
    }
    for (let i = 0; i < rowsPerChunk; i++) {
      const next = this.rows.next();
      if (next.done) {
        this.release();
        this.push(format === 'json' ? `${chunk}]` : chunk);
        this.push(null);
        return;
      }
      const item = present(next.value);
      chunk += format === 'csv' ? csvLine(columns.map((c) => item[c])) : `${this.count ? ',' : ''}${JSON.stringify(item)}`;
      this.count++;
    }
    this.push(chunk);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.release();
    cb(err);
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.rows?.return?.(); // ends the statement before its connection closes
    this.reader.close();
  }
}

/** The stream of an export; takes ownership of `reader`. */
export function exportStream<Row>(reader: Reader, spec: ExportSpec<Row>): Readable {
  return new ExportStream(reader, spec);
}
