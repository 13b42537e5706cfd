/**
 * One way to page a list query (spec, Pagination): LIMIT page_size + 1 tells has_more without a
 * count; the count runs only when the caller asks for totals (it can be costly on mails).
 */
import type { Db } from './db';

export interface PageRequest { page: number; pageSize: number }
export interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  hasMore: boolean;
  totalItems: number | null;
}

export interface ListQuery {
  /** FROM ... [JOIN ...] WHERE ...: the part shared by the select and the count. */
  from: string;
  params: unknown[];
  select: string;
  orderBy: string;
  withTotal?: boolean;
}

/**
 * The most rows a list counts for total_items: 100,000 index entries take ~10 ms; counting a
 * busy tenant's 3-month window (1.5 million mails) took 100-150 ms per page (bench/lists.ts).
 */
export const countCap = 100_000;

export function listPage<Row>(db: Db, q: ListQuery, p: PageRequest): Page<Row> {
  const offset = (p.page - 1) * p.pageSize;
  const rows = db
    .prepare(`SELECT ${q.select} ${q.from} ORDER BY ${q.orderBy} LIMIT ? OFFSET ?`)
    .all(...q.params, p.pageSize + 1, offset) as Row[];
  const hasMore = rows.length > p.pageSize;
  if (hasMore) rows.pop();
  let totalItems: number | null = null;
  if (q.withTotal !== false) {
    // Counting is bounded like the page: past countCap rows the total is costly (spec,
    // Pagination: null then), and has_more still tells the client what it needs to page.
    const n = db.prepare(`SELECT COUNT(*) FROM (SELECT 1 ${q.from} LIMIT ?)`).pluck().get(...q.params, countCap + 1) as number;
    totalItems = n > countCap ? null : n;
  }
  return { items: rows, page: p.page, pageSize: p.pageSize, hasMore, totalItems };
}

export function mapPage<A, B>(page: Page<A>, fn: (a: A) => B): Page<B> {
  return { ...page, items: page.items.map(fn) };
}

/** Collects WHERE clauses and their parameters in order. */
export class Where {
  private clauses: string[] = [];
  readonly params: unknown[] = [];
  add(clause: string, ...params: unknown[]): this {
    this.clauses.push(clause);
    this.params.push(...params);
    return this;
  }
  toString(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}
