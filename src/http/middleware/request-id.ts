/**
 * X-Request-Id on every response: the client's (when sane) or a new UUID; a trace id per request,
 * sent as X-Trace-Id (spec, Cross-cutting conventions) and quoted by every problem body.
 */
import crypto from 'node:crypto';
import type Koa from 'koa';
import { randomHex } from '../../lib/tokens';
import type { AppState } from '../api';

// Printable ASCII, inner spaces allowed (Koa trims the ends): nothing a header or a log line
// could be split by.
const sane = /^[\x20-\x7e]{1,200}$/;

export function requestId(): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id').trim();
    ctx.state.requestId = sane.test(given) ? given : crypto.randomUUID();
    ctx.state.traceId = randomHex(16);
    ctx.set('X-Request-Id', ctx.state.requestId);
    ctx.set('X-Trace-Id', ctx.state.traceId);
    await next();
  };
}
