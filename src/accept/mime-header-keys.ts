/**
 * nodemailer normalizes a header name on every getHeader/setHeader call (MimeNode's
 * `_normalizeHeaderKey`: three regular-expression replaces), some 25 times per message built:
 * a quarter of a 2 KB message's build. The normalization is a pure function of the name, so its
 * results are kept in a small table, filled once per distinct name; beyond `maxNames` distinct
 * names (client-chosen custom headers) it simply computes as before.
 */
import MimeNode from 'nodemailer/lib/mime-node';

type Normalize = (this: unknown, key: unknown) => string;

const maxNames = 1000;
const proto = MimeNode.prototype as unknown as { _normalizeHeaderKey: Normalize & { memoized?: true } };
const normalize = proto._normalizeHeaderKey;

if (typeof normalize === 'function' && !normalize.memoized) {
  const known = new Map<string, string>();
  const memoized: Normalize & { memoized?: true } = function (this: unknown, key: unknown): string {
    if (typeof key !== 'string') return normalize.call(this, key);
    let value = known.get(key);
    if (value === undefined) {
      value = normalize.call(this, key);
      if (known.size < maxNames) known.set(key, value);
    }
    return value;
  };
  memoized.memoized = true;
  proto._normalizeHeaderKey = memoized;
}
