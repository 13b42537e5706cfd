/**
 * Every /v1 path needs both headers (CONTRACT §6); the principal rides on ctx.state. A disabled
 * instance is refused here, before routing, so its key learns nothing from a 404 or 405 either
 * (spec, Authentication rule 5); scopes and allow lists are the route's (api.ts).
 */
import type Koa from 'koa';
import type { Db } from '../../store/db';
import { authenticate, requireActiveInstance } from '../../auth/api-keys';
import type { AppState } from '../api';

export function authenticateV1(db: Db): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.path === '/v1' || ctx.path.startsWith('/v1/')) {
      ctx.state.principal = authenticate(db, ctx.get('Authorization') || undefined, ctx.get('X-Instance-Slug') || undefined);
      requireActiveInstance(ctx.state.principal);
    }
    await next();
  };
}
