/**
 * Paths that need no credentials (CONTRACT §6): GET /, /docs (Swagger UI served from
 * node_modules, so it works offline), /openapi.json, /healthz and /metrics.
 */
import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import type { AppState } from '../api';
import type { HttpDeps } from '../deps';
import { ServiceError } from '../../errors';

const docsHtml = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Estafeta API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;
const initJs = "window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui' });\n";
const assetTypes: Record<string, string> = { '.css': 'text/css', '.js': 'application/javascript', '.png': 'image/png', '.map': 'application/json' };

export function publicRoutes(deps: HttpDeps & { openapi: () => unknown; metrics: () => Promise<{ type: string; body: string }> }): Router<AppState> {
  const router = new Router<AppState>({ sensitive: true });
  const uiDir = getAbsoluteFSPath();

  router.get('/', (ctx) => {
    ctx.body = {
      name: 'Estafeta email delivery API',
      links: { docs: '/docs', openapi: '/openapi.json', health: '/healthz' },
    };
  });
  router.get('/openapi.json', (ctx) => {
    ctx.body = deps.openapi();
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html';
    ctx.body = docsHtml;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'application/javascript';
    ctx.body = initJs;
  });
  router.get('/docs/:file', (ctx) => {
    const file = ctx.params.file;
    // Only plain file names from the Swagger UI package: no traversal out of it.
    // A regular file only: "." and ".." name directories, which a read stream fails on after the
    // response has begun (the client got an empty reply).
    if (!/^[\w.-]+$/.test(file) || !fs.statSync(path.join(uiDir, file), { throwIfNoEntry: false })?.isFile()) throw new ServiceError('not_found', 'No such route.');
    ctx.type = assetTypes[path.extname(file)] ?? 'application/octet-stream';
    ctx.body = fs.createReadStream(path.join(uiDir, file));
  });
  router.get('/healthz', (ctx) => {
    if (!deps.isReady()) throw new ServiceError('service_unavailable', 'Starting up.');
    ctx.body = { status: 'ok' };
  });
  router.get('/metrics', async (ctx) => {
    const m = await deps.metrics();
    ctx.type = m.type;
    ctx.body = m.body;
  });
  return router;
}
