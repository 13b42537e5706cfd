/**
 * Request bodies under a byte limit that applies to the bytes transferred and, with
 * `Content-Encoding: gzip`, to the inflated bytes too (413 with max_bytes, decided while
 * streaming: an unbounded body or a gzip bomb is never held in memory). Every body is read by
 * the libraries co-body (koa-body's reader) is made of: zlib's gunzip (as co-body's inflation sets it up) + raw-body do the decoding and
 * the limit; JSON is then parsed by @hapi/bourne, as co-body does, after a nesting guard co-body
 * lacks (parseJsonBody); a multipart body is split by busboy (multipart.ts). Library errors become the
 * spec's codes here: 413 request_too_large, 400 malformed_request (an encoding other than gzip
 * is refused with 415 before any library reads the body: checkEncoding).
 */
import type Koa from 'koa';
import bourne from '@hapi/bourne';
import getRawBody from 'raw-body';
import net from 'node:net';
import zlib from 'node:zlib';
import { Transform, type Readable } from 'node:stream';
import { pointerToken, ServiceError, validationError } from '../../errors';
import type { AppState } from '../api';
import { parseMultipart, type FilePart } from './multipart';
import { jsonNesting, maxJsonDepth, maxJsonMembers, widestMember } from '../../lib/json';

export const maxBodyBytes = 20 * 1024 * 1024;

export function hasBody(ctx: Koa.Context): boolean {
  return Boolean(ctx.get('transfer-encoding')) || Number(ctx.get('content-length') || 0) > 0;
}

const tooLarge = (limit: number): ServiceError =>
  new ServiceError('request_too_large', `The request body exceeds ${limit} bytes (transferred or decompressed).`, { max_bytes: limit });

/** How long the rest of a refused body is read and thrown away before the socket is closed anyway. */
export const lingerMs = 10_000;

/**
 * A body refused before its end (413 for its size, 400 for broken gzip) is usually still
 * arriving. Closing the socket under the upload makes the kernel answer the client's next
 * segments with a reset, and a client that writes its whole body before reading (Node's fetch,
 * Python's urllib) then loses the answer to EPIPE (RFC 9112 §9.6: a server closes in stages so
 * the client can read the response). So the rest is read and thrown away, as nginx's lingering
 * close does: the connection stays usable once the body ended, and where it must close (the
 * client sent `Connection: close`) only our side is shut after the response, the socket itself
 * once the body ended. A body that has not ended `lingerMs` after the refusal has its socket
 * closed: nothing of it is ever held.
 */
function drainRefused(ctx: Koa.Context): void {
  const { req } = ctx;
  if (req.complete) return;
  req.unpipe();
  req.removeAllListeners('data');
  req.resume();
  const socket = req.socket as net.Socket & { destroySoon?: () => void };
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
  socket.once('close', () => clearTimeout(timer));
  // Node's server ends a response that closes the connection with socket.destroySoon(): once our
  // FIN is out, the socket is destroyed and the rest of the body met with resets. The server's
  // sockets are half-open capable: our side ends, reading goes on until the body's end.
  socket.destroySoon = () => {
    if (req.complete) return net.Socket.prototype.destroySoon.call(socket);
    socket.end();
    req.once('end', () => socket.destroy());
  };
}

/** The spec's error for what raw-body, zlib or the JSON parser threw. */
function bodyError(ctx: Koa.Context, err: unknown, limit: number, what: string): unknown {
  const e = err as { status?: number; code?: unknown } | null;
  drainRefused(ctx);
  if (e?.status === 413) return tooLarge(limit);
  if (typeof e?.code === 'string' && e.code.startsWith('Z_')) return new ServiceError('malformed_request', 'The request body is not valid gzip.');
  if (e?.status === 400) return new ServiceError('malformed_request', `The request body is not valid ${what}.`);
  return err;
}

/**
 * The JSON Pointer of an own "__proto__" key (JSON.parse keeps it as a plain property). Walked
 * with a stack, and the pointer built only for the key found: a body nested 200,000 levels deep
 * must not overflow the call stack (a 500) or build a pointer string per level.
 */
function protoPointer(root: unknown): string | null {
  interface Node { value: unknown; key: string; parent: Node | null }
  const stack: Node[] = [{ value: root, key: '', parent: null }];
  const pointer = (n: Node): string => {
    const tokens: string[] = [];
    for (let at: Node | null = n; at?.parent; at = at.parent) tokens.push(pointerToken(at.key));
    return tokens.reverse().map((t) => `/${t}`).join('');
  };
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const { value } = node;
    if (value === null || typeof value !== 'object') continue;
    const keys = Object.keys(value);
    if (keys.includes('__proto__')) return pointer({ value: null, key: '__proto__', parent: node });
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (value as Record<string, unknown>)[keys[i]], key: keys[i], parent: node });
  }
  return null;
}

/** The spec names gzip only (x-gzip is gzip): other encodings, deflate and br included, are 415. */
function checkEncoding(ctx: Koa.Context): 'identity' | 'gzip' {
  const given = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  const encoding = given === 'x-gzip' ? 'gzip' : given;
  if (encoding !== 'identity' && encoding !== 'gzip') {
    // RFC 9110 §15.5.16: a 415 caused by the coding names the codings that are accepted.
    throw new ServiceError('unsupported_media_type', `Content-Encoding ${given} is not supported; use gzip or none.`, {}, { 'Accept-Encoding': 'gzip' });
  }
  return encoding;
}

/** Reads the whole body, inflating gzip, never past `limit` bytes on either side. */
export async function readBody(ctx: Koa.Context, limit = maxBodyBytes, what = 'multipart'): Promise<Buffer> {
  const identity = checkEncoding(ctx) === 'identity';
  const declared = ctx.get('content-length') ? Number(ctx.get('content-length')) : undefined;
  try {
    // raw-body counts the decoded bytes; a declared length over the limit is refused unread.
    if (identity) return await getRawBody(ctx.req, { limit, length: declared });
    // Compressed, the limit holds for the bytes transferred too (spec, Limits): a gzip member can
    // carry any amount of header (FEXTRA, FCOMMENT) that inflates to nothing.
    if (declared !== undefined && declared > limit) throw Object.assign(new Error('request entity too large'), { status: 413 });
    const transferred = capped(ctx.req, limit);
    const inflated = transferred.pipe(zlib.createUnzip()); // what inflation does for gzip
    transferred.on('error', (err) => inflated.destroy(err));
    return await getRawBody(inflated, { limit });
  } catch (err) {
    throw bodyError(ctx, err, limit, what);
  }
}

/** The stream's bytes, failing with a 413 (as raw-body's own limit does) once more than `limit` went through. */
function capped(source: Readable, limit: number): Transform {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(Object.assign(new Error('request entity too large'), { status: 413 }));
      else done(null, chunk);
    },
  });
  source.on('error', (err) => counter.destroy(err));
  return source.pipe(counter);
}

export type ParsedBody =
  | { multipart: false; body: unknown }
  | { multipart: true; fields: Record<string, string>; files: FilePart[] };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A JSON body as co-body read it (UTF-8, a leading BOM dropped, any JSON value, parsed by
 * @hapi/bourne with its guard against a "__proto__" key), but judged before parsing when it
 * nests deeper or holds more values than any request of the API: 422, well-formed JSON that no
 * schema allows (400 when its brackets do not even close).
 */
function parseJsonBody(bytes: Buffer): unknown {
  const malformed = (): ServiceError => new ServiceError('malformed_request', 'The request body is not valid JSON.');
  // RFC 8259 §8.1: JSON between systems is UTF-8. Bytes that are not (a Latin-1 body, say) are
  // malformed JSON (CONTRACT §6: 400), never text stored with U+FFFD in place of what was sent.
  let text: string;
  try {
    text = utf8.decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    throw malformed();
  }
  if (/^[ \t\r\n]*$/.test(text)) return undefined; // JSON's own whitespace only: no body
  const nesting = jsonNesting(text);
  if (nesting === 'broken') throw malformed();
  if (nesting === 'deep') {
    throw validationError([{ pointer: '', code: 'value_error.depth', message: `The body nests arrays and objects deeper than ${maxJsonDepth} levels` }]);
  }
  if (nesting === 'wide') {
    throw validationError([{ pointer: widestMember(text), code: 'value_error.size', message: `The body holds more than ${maxJsonMembers} values; no request of the API has as many` }]);
  }
  let body: unknown;
  try {
    body = bourne.parse(text, { protoAction: 'error' });
  } catch (err) {
    // bourne's guard refuses a "__proto__" key: the JSON itself is valid, so it is a field the
    // schema does not allow (CONTRACT §6: 422), named by its pointer.
    if (err instanceof SyntaxError && /forbidden prototype property/.test(err.message)) {
      const pointer = protoPointer(JSON.parse(text) as unknown) ?? '';
      throw validationError([{ pointer, code: 'extra_forbidden', message: 'Extra inputs are not permitted' }]);
    }
    throw malformed();
  }
  // An escaped lone surrogate ("\udc00") is valid JSON but no text UTF-8 can hold: stored, it
  // would come back as U+FFFD, not "as given", and measure otherwise than it was checked. A NUL
  // ("\u0000") is no text a field of the API means, and no query filter could find it again.
  if (unstorableEscape.test(text)) {
    const pointer = illFormedPointer(body);
    if (pointer !== null) throw validationError([{ pointer, code: 'value_error.unicode', message: 'The text holds a NUL or a lone UTF-16 surrogate, which no field can store as given' }]);
  }
  return body;
}

const unstorableEscape = /\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)/;
const loneSurrogate = /\p{Cs}|\0/u;

/** The pointer of the first string (value or key) holding a lone surrogate or a NUL; walked with a stack, like protoPointer. */
function illFormedPointer(root: unknown): string | null {
  const stack: { value: unknown; pointer: string }[] = [{ value: root, pointer: '' }];
  while (stack.length > 0) {
    const { value, pointer } = stack.pop() as { value: unknown; pointer: string };
    if (typeof value === 'string') {
      if (loneSurrogate.test(value)) return pointer;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      const at = `${pointer}/${pointerToken(key)}`;
      if (loneSurrogate.test(key)) return at;
      stack.push({ value: child, pointer: at });
    }
  }
  return null;
}

/** JSON, or multipart/form-data when `multipart` is set (a route that takes file parts). */
export async function readRequestBody(ctx: Koa.Context, opts: { multipart?: boolean; limit?: number } = {}): Promise<ParsedBody> {
  const limit = opts.limit ?? maxBodyBytes;
  // The type is judged first (spec, Errors: 415 "Content-Type not JSON"), with or without bytes
  // (ctx.is answers null for a body of none, so the type is read from the header itself).
  const type = ctx.request.type.trim().toLowerCase();
  const multipart = opts.multipart === true && type === 'multipart/form-data';
  if (!multipart && type !== 'application/json' && !type.endsWith('+json') && (type !== '' || hasBody(ctx))) {
    throw new ServiceError('unsupported_media_type', opts.multipart ? 'Content-Type must be application/json or multipart/form-data.' : 'Content-Type must be application/json.');
  }
  // JSON has no charset but UTF-8 (RFC 8259 §8.1): a body declared in another one is a media
  // type this door does not read, whatever its bytes.
  const charset = multipart ? '' : (ctx.request.charset || '').trim().toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ServiceError('unsupported_media_type', `Content-Type must be application/json in UTF-8; charset ${charset} is not accepted.`);
  }
  // An empty body is not valid JSON (CONTRACT §6: 400).
  const empty = (): ServiceError => new ServiceError('malformed_request', 'The request body is empty; send a JSON object.');
  if (!hasBody(ctx)) throw empty();
  if (multipart) {
    const form = await parseMultipart(await readBody(ctx, limit), ctx.get('content-type'));
    return { multipart: true, fields: form.fields, files: form.files };
  }
  const body = parseJsonBody(await readBody(ctx, limit, 'JSON'));
  if (body === undefined) throw empty(); // chunked, zero bytes
  return { multipart: false, body };
}

export function jsonBody(): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    const parsed = await readRequestBody(ctx as unknown as Koa.Context);
    // Any JSON value: the route validates it with its schema before use.
    ctx.request.body = (parsed.multipart ? parsed.fields : parsed.body) as typeof ctx.request.body;
    return next();
  };
}

/**
 * A route that takes no body (POST /v1/domains/{id}/validate: "takes no body", "neither emits
 * 400") reads one sent anyway and drops it, whatever its type, encoding or content: only its
 * size is bounded (413 past 20 MB transferred, spec, Limits), so it is never held in memory.
 */
export function noBody(): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    if (hasBody(ctx)) {
      const length = ctx.get('content-length') ? Number(ctx.get('content-length')) : undefined;
      try {
        await getRawBody(ctx.req, { limit: maxBodyBytes, length });
      } catch (err) {
        throw bodyError(ctx as unknown as Koa.Context, err, maxBodyBytes, 'body');
      }
    }
    return next();
  };
}
