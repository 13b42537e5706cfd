/** Every /v1 path needs both headers (CONTRACT §6); the principal rides on ctx.state. */
import type Koa from 'koa';
import type { Db } from '../../store/db';
import { authenticate } from '../../auth/api-keys';
import type { AppState } from '../api';

export function authenticateV1(db: Db): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.path === '/v1' || ctx.path.startsWith('/v1/')) {
      ctx.state.principal = authenticate(db, ctx.get('Authorization') || undefined, ctx.get('X-Instance-Slug') || undefined);
    }
    await next();
  };
}
