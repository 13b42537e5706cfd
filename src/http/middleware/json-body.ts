/**
 * Request bodies: JSON only (415 otherwise), read with a byte limit while streaming (413 with
 * max_bytes), gzip inflated under the same limit, malformed JSON a 400 malformed_request.
 */
import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { ServiceError } from '../../errors';
import type { AppState } from '../api';

export const maxBodyBytes = 20 * 1024 * 1024;

export function hasBody(ctx: Koa.Context): boolean {
  return Boolean(ctx.get('transfer-encoding')) || Number(ctx.get('content-length') || 0) > 0;
}

export function jsonBody(limit = maxBodyBytes): Koa.Middleware<AppState> {
  const parse = koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonLimit: limit, jsonStrict: true });
  return async (ctx, next) => {
    if (!hasBody(ctx)) {
      ctx.request.body = undefined;
      return next();
    }
    if (!ctx.is('application/json', '+json')) throw new ServiceError('unsupported_media_type', 'Content-Type must be application/json.');
    try {
      await parse(ctx as unknown as Koa.Context, async () => undefined);
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status === 413) throw new ServiceError('request_too_large', `The request body exceeds ${limit} bytes.`, { max_bytes: limit });
      if (status === 415) throw new ServiceError('unsupported_media_type', 'Unsupported Content-Encoding.');
      if (status && status >= 400 && status < 500) throw new ServiceError('malformed_request', 'The request body is not valid JSON.');
      throw err;
    }
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
