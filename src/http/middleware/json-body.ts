/**
 * Request bodies, read while streaming under a byte limit that applies to the bytes transferred
 * and, for `Content-Encoding: gzip`, to the inflated bytes too (413 with max_bytes, decided as
 * soon as the limit is passed: an unbounded body or a gzip bomb is never held in memory).
 * JSON (malformed → 400) everywhere; multipart/form-data where a route asks for it (multipart.ts).
 */
import zlib from 'node:zlib';
import type Koa from 'koa';
import { ServiceError } from '../../errors';
import type { AppState } from '../api';
import { parseMultipart, type FilePart } from './multipart';

declare module 'koa' {
  interface Request {
    /** The parsed body, set by jsonBody(); validate it with a schema before use. */
    body?: unknown;
  }
}

export const maxBodyBytes = 20 * 1024 * 1024;

export function hasBody(ctx: Koa.Context): boolean {
  return Boolean(ctx.get('transfer-encoding')) || Number(ctx.get('content-length') || 0) > 0;
}

const tooLarge = (limit: number): ServiceError =>
  new ServiceError('request_too_large', `The request body exceeds ${limit} bytes (transferred or decompressed).`, { max_bytes: limit });

/** Reads the whole body, inflating gzip, never past `limit` bytes on either side. */
export function readBody(ctx: Koa.Context, limit = maxBodyBytes): Promise<Buffer> {
  if (Number(ctx.get('content-length') || 0) > limit) {
    ctx.set('Connection', 'close');
    return Promise.reject(tooLarge(limit));
  }
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  if (!['identity', 'gzip', 'x-gzip'].includes(encoding)) {
    return Promise.reject(new ServiceError('unsupported_media_type', `Content-Encoding ${encoding} is not supported; use gzip or none.`));
  }
  const req = ctx.req;
  const gunzip = encoding === 'identity' ? null : zlib.createGunzip();
  const out: NodeJS.ReadableStream = gunzip ? req.pipe(gunzip) : req;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let transferred = 0;
    let size = 0;
    let done = false;
    const finish = (err: unknown, value?: Buffer): void => {
      if (done) return;
      done = true;
      req.off('data', onRaw);
      out.off('data', onData);
      if (err) {
        if (gunzip) {
          req.unpipe(gunzip);
          gunzip.destroy();
        }
        ctx.set('Connection', 'close');
        req.resume(); // discard the rest: the answer is already decided
        reject(err);
      } else resolve(value ?? Buffer.alloc(0));
    };
    const onRaw = (c: Buffer): void => {
      transferred += c.length;
      if (transferred > limit) finish(tooLarge(limit));
    };
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > limit) return finish(tooLarge(limit));
      chunks.push(c);
    };
    if (gunzip) req.on('data', onRaw);
    out.on('data', onData);
    out.on('end', () => finish(null, Buffer.concat(chunks, size)));
    out.on('error', () => finish(new ServiceError('malformed_request', 'The request body is not valid gzip.')));
    req.on('error', (err) => finish(err));
  });
}

function parseJsonBody(buf: Buffer): unknown {
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    throw new ServiceError('malformed_request', 'The request body is not valid JSON.');
  }
}

export type ParsedBody =
  | { multipart: false; body: unknown }
  | { multipart: true; fields: Record<string, string>; files: FilePart[] };

/** JSON, or multipart/form-data when `multipart` is set (a route that takes file parts). */
export async function readRequestBody(ctx: Koa.Context, opts: { multipart?: boolean; limit?: number } = {}): Promise<ParsedBody> {
  const limit = opts.limit ?? maxBodyBytes;
  if (!hasBody(ctx)) return { multipart: false, body: undefined };
  if (opts.multipart && ctx.is('multipart/form-data')) {
    const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(ctx.get('content-type'));
    if (!boundary) throw new ServiceError('malformed_request', 'multipart/form-data needs a boundary.');
    const form = parseMultipart(await readBody(ctx, limit), boundary[1] ?? boundary[2]);
    return { multipart: true, fields: form.fields, files: form.files };
  }
  if (!ctx.is('application/json', '+json')) {
    throw new ServiceError('unsupported_media_type', opts.multipart ? 'Content-Type must be application/json or multipart/form-data.' : 'Content-Type must be application/json.');
  }
  return { multipart: false, body: parseJsonBody(await readBody(ctx, limit)) };
}

export function jsonBody(limit = maxBodyBytes): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    const parsed = await readRequestBody(ctx as unknown as Koa.Context, { limit });
    ctx.request.body = parsed.multipart ? parsed.fields : parsed.body;
    return next();
  };
}

/** Routes without a body accept none of another type: a body sent anyway must still be JSON. */
export function noBody(): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    if (hasBody(ctx) && !ctx.is('application/json', '+json')) throw new ServiceError('unsupported_media_type', 'Content-Type must be application/json.');
    return next();
  };
}
