/**
 * The one error path of the HTTP door (first middleware after request-id): every thrown error
 * becomes RFC 9457 problem+json from the catalog. A 500 says nothing but its trace_id; the real
 * error is logged here, once.
 */
import type Koa from 'koa';
import { asServiceError, catalog, generic } from '../../errors';
import type { Logger } from '../../lib/log';
import type { AppState } from '../api';

export const problemTypeBase = 'https://estafeta.dev/problems/';

/** The members every problem body of the door carries (spec, Errors), in one place. */
export function problemBody(p: { code: string; status: number; title: string; detail: string | undefined; traceId: string; requestId: string }) {
  return {
    type: problemTypeBase + p.code.replace(/_/g, '-'),
    title: p.title,
    status: p.status,
    detail: p.detail,
    code: p.code,
    trace_id: p.traceId,
    // spec, Identifiers: the request id appears in error messages too (and in X-Request-Id).
    request_id: p.requestId,
  };
}

export function problem(log: Logger): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const e = asServiceError(err);
      if (e.code === 'internal_error') {
        log.error({ err, trace_id: ctx.state.traceId, request_id: ctx.state.requestId, path: ctx.path }, 'http.internal_error');
      }
      const { status, title } = catalog[e.code];
      ctx.status = status;
      for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
      ctx.type = 'application/problem+json';
      const detail = e.code === 'internal_error' ? generic.internal_error : e.detail;
      ctx.body = {
        ...problemBody({ code: e.code, status, title, detail, traceId: ctx.state.traceId, requestId: ctx.state.requestId }),
        ...extrasFor(status, e.extras),
      };
    }
  };
}

/** errors[] belongs to the 422 only (spec, Errors); other extras (limit, max_bytes...) pass. */
function extrasFor(status: number, extras: Record<string, unknown>): Record<string, unknown> {
  if (status === 422) return extras;
  const { errors: _dropped, ...rest } = extras;
  return rest;
}
