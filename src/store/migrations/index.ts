/** Ordered list of schema migrations; each runs once, in its own transaction, at open. */
import * as m001 from './001-initial';

export interface Migration { version: number; name: string; sql: string }

export const migrations: Migration[] = [m001];
