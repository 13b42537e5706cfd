/** Timestamps: stored as epoch milliseconds, shown as RFC 3339 UTC with the `Z` suffix. */
export type Millis = number;

export function iso(ms: Millis): string;
export function iso(ms: Millis | null | undefined): string | null;
export function iso(ms: Millis | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export const now = (): Millis => Date.now();
