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
 * How JSON text nests, read without building it: `deep` past `max` levels, `broken` when its
 * brackets or strings do not close (it is no JSON at all: 400, not the 422 of deep JSON), else
 * `shallow`. JSON.parse builds whatever it is given: 20 MB of `[` is ten million nested arrays,
 * seconds of the one event loop every door shares. A real body is decided by a few native
 * indexOf calls (at most `max` brackets in all); only text with more is walked, once, its
 * strings skipped whole by indexOf.
 */
export function jsonNesting(text: string, max = maxJsonDepth): 'shallow' | 'deep' | 'broken' {
  let brackets = 0;
  for (const open of ['[', '{']) {
    for (let i = text.indexOf(open); i >= 0 && brackets <= max; i = text.indexOf(open, i + 1)) brackets++;
  }
  if (brackets <= max) return 'shallow';
  let stack = new Uint8Array(1024); // the brackets open at each depth, grown as needed
  let depth = 0;
  let deep = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string, skipped whole: to the first quote after an even run of backslashes.
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return 'broken';
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (depth === stack.length) {
        const grown = new Uint8Array(stack.length * 2);
        grown.set(stack);
        stack = grown;
      }
      stack[depth++] = c;
      if (depth > max) deep = true;
    } else if (c === 0x5d || c === 0x7d) {
      if (depth === 0 || (c === 0x5d) !== (stack[--depth] === 0x5b)) return 'broken';
    }
  }
  return depth !== 0 ? 'broken' : deep ? 'deep' : 'shallow';
}
