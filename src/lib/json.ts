/** JSON columns: parse with a fallback so one bad row never turns a list into a 500. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** Deeper than any request body of the API (the send body is 3 levels deep). */
export const maxJsonDepth = 32;

/**
 * Whether JSON text nests arrays and objects deeper than `max`. JSON.parse builds whatever it is
 * given: 20 MB of `[` is ten million nested arrays, several seconds of the one event loop every
 * door shares (seconds more to validate them). Counting the brackets first costs almost nothing
 * for a real body (a few native indexOf calls); only text with more than `max` brackets is
 * walked, once, skipping strings.
 */
export function nestsDeeperThan(text: string, max = maxJsonDepth): boolean {
  let brackets = 0;
  for (const open of ['[', '{']) {
    for (let i = text.indexOf(open); i >= 0 && brackets <= max; i = text.indexOf(open, i + 1)) brackets++;
  }
  if (brackets <= max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, past escaped characters.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}
