/** JSON columns: parse with a fallback so one bad row never turns a list into a 500. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * Where the JSON string opening at `start` closes (its quote), or -1: the first quote after an
 * even run of backslashes, found by indexOf, so a string is skipped whole.
 */
function stringEnd(text: string, start: number): number {
  for (let end = text.indexOf('"', start + 1); end >= 0; end = text.indexOf('"', end + 1)) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end;
  }
  return -1;
}

/** Deeper than any request body of the API (the send body is 3 levels deep). */
export const maxJsonDepth = 32;

/**
 * More values than any request body of the API holds (a send has at most 50 recipients, 20
 * attachments and 15 headers; a consent event 100 rules), with room for a client's mistakes to
 * be judged field by field: past it, parsing and validating alone hold the loop for seconds
 * (1M keys: ~0.7 s to parse, ~0.9 s to validate).
 */
export const maxJsonMembers = 200_000;

/**
 * How JSON text is shaped, read without building it: `deep` past `maxDepth` levels, `wide` past
 * `maxMembers` values (counted by their separating commas), `broken` when its brackets or
 * strings do not close (it is no JSON at all: 400, not the 422 of deep or wide JSON), else
 * `shallow`. JSON.parse builds whatever it is given: 20 MB of `[` is ten million nested arrays,
 * 20 MB of `"k1":1,` a million keys, seconds of the one event loop every door shares. A real body
 * is decided by a few native indexOf calls (at most `maxDepth` brackets and `maxMembers` commas
 * in all); only text with more is walked, once, its strings skipped whole by indexOf.
 */
export function jsonNesting(text: string, maxDepth = maxJsonDepth, maxMembers = maxJsonMembers): 'shallow' | 'deep' | 'wide' | 'broken' {
  let brackets = 0;
  for (const open of ['[', '{']) {
    for (let i = text.indexOf(open); i >= 0 && brackets <= maxDepth; i = text.indexOf(open, i + 1)) brackets++;
  }
  let commas = 0;
  for (let i = text.indexOf(','); i >= 0 && commas <= maxMembers; i = text.indexOf(',', i + 1)) commas++;
  if (brackets <= maxDepth && commas <= maxMembers) return 'shallow';
  let stack = new Uint8Array(1024); // the brackets open at each depth, grown as needed
  let depth = 0;
  let deep = false;
  let members = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (end < 0) return 'broken';
      i = end;
    } else if (c === 0x2c) {
      members++;
    } else if (c === 0x5b || c === 0x7b) {
      if (depth === stack.length) {
        const grown = new Uint8Array(stack.length * 2);
        grown.set(stack);
        stack = grown;
      }
      stack[depth++] = c;
      if (depth > maxDepth) deep = true;
    } else if (c === 0x5d || c === 0x7d) {
      if (depth === 0 || (c === 0x5d) !== (stack[--depth] === 0x5b)) return 'broken';
    }
  }
  return depth !== 0 ? 'broken' : deep ? 'deep' : members > maxMembers ? 'wide' : 'shallow';
}

/**
 * The JSON Pointer of the root object's member that holds most of the values of `text` (judged
 * `wide` by jsonNesting), or '' when the root itself holds them: a client sending a million
 * recipients is told `/to`, where the recipient count rule points.
 */
export function widestMember(text: string): string {
  let depth = 0;
  let key = [0, 0]; // where the current member's key (a JSON string) starts and ends
  let inKey = 0;
  let widest = { key, count: 0 };
  let root = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (end < 0) return '';
      if (depth === 1) {
        let next = end + 1;
        while (next < text.length && /\s/.test(text[next])) next++;
        if (text.charCodeAt(next) === 0x3a) {
          key = [i, end + 1];
          inKey = 0;
        }
      }
      i = end;
    } else if (c === 0x2c) {
      if (depth === 1) root++;
      else if (depth > 1 && ++inKey > widest.count) widest = { key, count: inKey };
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  if (widest.count <= root) return '';
  const name = JSON.parse(text.slice(widest.key[0], widest.key[1])) as string;
  return `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}
