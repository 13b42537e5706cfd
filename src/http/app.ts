/**
 * The HTTP door: Koa app = request id → problem+json → metrics → public paths → /v1 auth →
 * resource routes → 405/404 for whatever matched no route.
 */
import Koa from 'koa';
import { Api, type AppState } from './api';
import type { HttpDeps } from './deps';
import { requestId } from './middleware/request-id';
import { problem } from './middleware/problem';
import { authenticateV1 } from './middleware/authenticate';
import { registerRoutes } from './routes';
import { publicRoutes } from './routes/public';
import { trackingRoutes } from './routes/tracking';
import { buildOpenApi } from './openapi';
import { ServiceError, generic } from '../errors';
import { authorize } from '../auth/api-keys';
import type { Metrics } from '../lib/metrics';

export function createApp(deps: HttpDeps & { metrics: Metrics }): { app: Koa<AppState>; api: Api } {
  const app = new Koa<AppState>();
  const api = new Api();
  registerRoutes(api, { ...deps, refusedSends: deps.metrics.refusedSends });
  let openapi: unknown;
  const pub = publicRoutes({ ...deps, openapi: () => (openapi ??= buildOpenApi(api.endpoints, deps.config.publicUrl)), metrics: deps.metrics.render });

  app.use(requestId());
  // One access line per request (spec, Identifiers: the request id appears in the logs), written
  // after problem() settled the status; the path without its query, which can carry addresses.
  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      deps.metrics.httpRequests.inc({ method: ctx.method, status: String(ctx.status) });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      deps.log.info({ request_id: ctx.state.requestId, trace_id: ctx.state.traceId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'http.request');
    }
  });
  // CONTRACT §1, stop accepting: a stop closes the listening socket, but a keep-alive connection
  // would go on bringing requests until the bound. Each response from then on closes its
  // connection, and a request that arrives on one after the stop began is refused 503 (retry).
  app.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      if (deps.isStopping()) ctx.set('Connection', 'close');
    }
  });
  app.use(problem(deps.log));
  app.use(async (ctx, next) => {
    if (deps.isStopping()) throw new ServiceError('service_unavailable', 'The service is stopping; retry the request.');
    await next();
  });
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (Node's own would be a bare one).
  app.use(async (ctx, next) => {
    if (ctx.req.httpVersion !== '1.0' && ctx.get('Host') === '') throw new ServiceError('malformed_request', 'An HTTP/1.1 request carries a Host header.');
    await next();
  });
  app.use(pub.routes());
  // ESTAFETA_PUBLIC_URL may carry a path (https://example.net/mail): its links then arrive with
  // it when nothing in front strips it, and are the same tracking links.
  const publicPath = publicPathOf(deps.config.publicUrl);
  if (publicPath) {
    app.use(async (ctx, next) => {
      if (ctx.path.startsWith(`${publicPath}/t/`)) ctx.path = ctx.path.slice(publicPath.length);
      await next();
    });
  }
  const tracking = trackingRoutes(deps);
  app.use(tracking.routes());
  app.use(authenticateV1(deps.db));
  // A literal path is that resource, not a value of a sibling's parameter: GET /v1/mails/send is
  // a verb POST /v1/mails/send does not accept (405), not the mail whose id is "send".
  const literal = literalPaths(api);
  // A 404 or 405 on /v1 tells a caller which paths exist: it is answered only past the checks a
  // route makes (README, order of checks), the IP allow lists included.
  const noRoute = (ctx: Koa.ParameterizedContext<AppState>, err: ServiceError): ServiceError => {
    if (ctx.state.principal) authorize(ctx.state.principal, null, ctx.ip);
    return err;
  };
  app.use(async (ctx, next) => {
    // The router matches a path with or without one trailing slash (non-strict): so do these
    // checks, or /v1/mails/send/ would be the mail "send" and POST /v1/domains/ an unaccepted verb.
    const path = ctx.path.length > 1 && ctx.path.endsWith('/') ? ctx.path.slice(0, -1) : ctx.path;
    if (dashboardOnly(ctx.method, path)) throw new ServiceError('forbidden', generic.forbidden as string);
    const methods = literal.get(path);
    if (methods && !methods.includes(ctx.method)) throw noRoute(ctx, notAllowed(ctx.method, methods));
    await next();
  });
  app.use(api.router.routes());
  app.use(async (ctx) => {
    const methods = new Set<string>();
    for (const router of [api.router, pub, tracking]) {
      const m = router.match(ctx.path, ctx.method);
      if (m.route) return; // a route answered
      for (const layer of m.path) for (const method of layer.methods) methods.add(method);
    }
    if (methods.size > 0) throw noRoute(ctx, notAllowed(ctx.method, [...methods]));
    throw noRoute(ctx, new ServiceError('not_found', `No route for ${ctx.method} ${ctx.path}.`));
  });
  // Errors are answered by problem(); this only silences Koa's default stderr print.
  app.on('error', () => undefined);
  return { app, api };
}

/**
 * The spec's dashboard operations (Dashboard endpoints, and the /v1/private/ routes) take a user
 * JWT: an API key, however privileged, is the wrong role there (Authentication rule 5: 403), not
 * an unknown route or an unaccepted verb. The reads of that table an API key may do are routes.
 */
const dashboardRoutes: [string, RegExp][] = [
  ['POST', /^\/v1\/domains$/],
  ['POST', /^\/v1\/domains\/[^/]+\/send-dns-config$/],
  ['DELETE', /^\/v1\/domains\/[^/]+$/],
  ['POST', /^\/v1\/senders$/],
  ['GET', /^\/v1\/senders\/[^/]+\/stats$/],
  ['HEAD', /^\/v1\/senders\/[^/]+\/stats$/],
  ['DELETE', /^\/v1\/senders\/[^/]+$/],
];

function dashboardOnly(method: string, path: string): boolean {
  return path.startsWith('/v1/private/') || dashboardRoutes.some(([m, re]) => m === method && re.test(path));
}

function publicPathOf(publicUrl: string): string {
  try {
    return new URL(publicUrl).pathname.replace(/\/+$/, '');
  } catch {
    return '';
  }
}

function notAllowed(method: string, allowed: string[]): ServiceError {
  const allow = allowed.join(', ');
  return new ServiceError('method_not_allowed', `Method ${method} is not allowed here; use ${allow}.`, {}, { Allow: allow });
}

/** The API's parameter-free paths and the methods each accepts (HEAD with GET, as the router answers it). */
function literalPaths(api: Api): Map<string, string[]> {
  const paths = new Map<string, string[]>();
  for (const ep of api.endpoints) {
    if (ep.path.includes(':')) continue;
    const methods = paths.get(ep.path) ?? [];
    const method = ep.method.toUpperCase();
    methods.push(...(method === 'GET' ? ['HEAD', 'GET'] : [method]));
    paths.set(ep.path, methods);
  }
  return paths;
}
