/**
 * The endpoint registry: every /v1 route is declared here with its scope, schemas and errors, so
 * that authorization and /openapi.json come from the same declaration as the handler.
 */
import Router, { type RouterContext } from '@koa/router';
import type Koa from 'koa';
import type { ErrorCode } from '../errors';
import { ServiceError } from '../errors';
import { authorize, type Principal, type Scope } from '../auth/api-keys';
import { noBody } from './middleware/json-body';
import type { PageRequest } from '../store/page';
import type { Page } from '../store/page';

export interface AppState { requestId: string; traceId: string; principal?: Principal }
export type Ctx = RouterContext<AppState>;

export interface Endpoint {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa router syntax: /v1/domains/:id */
  path: string;
  summary: string;
  tag: string;
  /** null: any valid credentials; undefined never (every /v1 route names its scope). */
  scope: Scope | null;
  /** $id of the query-parameter schema (object of named parameters). */
  query?: string;
  /** $id of the request body schema. */
  body?: string;
  /** The body may also come as multipart/form-data (CONTRACT §6, Multipart): file parts `attachments`. */
  multipart?: boolean;
  /** $id of the response schema; `list` wraps it in the collection envelope; `csv`: also served as text/csv. */
  response?: { status: number; schema?: string; list?: boolean; headers?: string[]; csv?: boolean };
  /** page_size when the query has none (spec, Pagination: 20, 10 on the template list). */
  pageSize?: number;
  errors?: ErrorCode[];
  /** Path parameters and their types, for the OpenAPI document. */
  params?: Record<string, 'integer' | 'string'>;
}

export type Handler = (ctx: Ctx, principal: Principal) => Promise<void> | void;

export class Api {
  // Case-sensitive like the authentication check (`/v1/` only): `/V1/...` is no route (404), not a
  // route reached without a principal.
  readonly router = new Router<AppState>({ sensitive: true });
  readonly endpoints: Endpoint[] = [];

  add(ep: Endpoint, ...handlers: [...Koa.Middleware<AppState>[], Handler]): void {
    this.endpoints.push(ep);
    const handler = handlers.pop() as Handler;
    // A bodiless write (POST /v1/domains/{id}/validate) still refuses a body that is not JSON: 415.
    const middleware = [...(ep.body || ep.method === 'get' ? [] : [noBody()]), ...(handlers as Koa.Middleware<AppState>[])];
    this.router[ep.method](ep.path, async (ctx: Ctx, next: Koa.Next) => {
      const principal = ctx.state.principal;
      if (!principal) throw new Error(`route ${ep.path} reached without a principal`);
      authorize(principal, ep.scope, ctx.ip);
      // A route that reads no query ignores one; a route that does reads only well-encoded ones.
      if (ep.query && ctx.querystring && !wellEncoded(ctx.querystring)) throw new ServiceError('malformed_request', 'The query string is not valid percent-encoding.');
      await next();
    }, ...middleware, async (ctx: Ctx) => {
      await handler(ctx, ctx.state.principal as Principal);
    });
  }
}

/**
 * Every query-string value must be percent-encoded (spec, Text filters): `%zz` or a cut UTF-8
 * sequence is a malformed parameter (400), not a value the parser quietly keeps as typed.
 */
function wellEncoded(querystring: string): boolean {
  try {
    decodeURIComponent(querystring.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

/**
 * Path ids are integers; anything else is a 422 naming the parameter (spec: no 400 on paths).
 * Any integer is an id to look up: one no resource has (0, -1) is that resource's 404.
 */
export function intParam(ctx: Ctx, name: string): number {
  const raw = ctx.params[name];
  if (!/^-?\d+$/.test(raw ?? '')) {
    throw new ServiceError('validation_error', `Path parameter ${name} must be an integer.`, {
      errors: [{ pointer: `/${name}`, code: 'int_parsing', message: 'Input should be a valid integer' }],
    });
  }
  // Past 2^53 - 1 the number read is no longer the one written (9007199254740993 reads as
  // ...992): refused as a JSON body's id is, never looked up as a near id.
  const id = Number(raw);
  if (!Number.isSafeInteger(id)) {
    throw new ServiceError('validation_error', `Path parameter ${name} is past ${Number.MAX_SAFE_INTEGER}.`, {
      errors: [{ pointer: `/${name}`, code: 'less_than_equal', message: `Input should be less than or equal to ${Number.MAX_SAFE_INTEGER}`, params: { le: Number.MAX_SAFE_INTEGER } }],
    });
  }
  return id;
}

export function pageOf(q: { page?: number; page_size?: number }, defaultSize = 20): PageRequest {
  return { page: q.page ?? 1, pageSize: q.page_size ?? defaultSize };
}

/** The collection envelope (spec, Pagination). */
export function collection<T>(page: Page<T>) {
  return {
    data: page.items,
    pagination: {
      page: page.page,
      page_size: page.pageSize,
      has_more: page.hasMore,
      total_items: page.totalItems,
      total_pages: page.totalItems === null ? null : Math.ceil(page.totalItems / page.pageSize),
    },
  };
}
