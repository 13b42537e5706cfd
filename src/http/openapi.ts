/**
 * /openapi.json (OpenAPI 3.1) built from the endpoint registry and the JSON Schemas of schema/ —
 * the same documents ajv validates with, so the served contract and the validator agree.
 */
import { catalog } from '../errors';
import { queryParameters, schemaDocs, type SchemaDoc } from '../lib/schemas';
import type { Endpoint } from './api';

type Json = Record<string, unknown>;

/** Schema-file refs are bare $ids ("Domain"); OpenAPI wants component pointers. */
function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node && typeof node === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === '$id') continue;
      out[k] = k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? `#/components/schemas/${v.split('#')[0]}` : rewriteRefs(v);
    }
    return out;
  }
  return node;
}

const toOpenApiPath = (path: string): string => path.replace(/:([A-Za-z_]+)/g, '{$1}');

function operation(ep: Endpoint): Json {
  const parameters: Json[] = [];
  for (const [name, type] of Object.entries(ep.params ?? {})) parameters.push({ name, in: 'path', required: true, schema: { type } });
  if (ep.query) {
    for (const { name, schema, required } of queryParameters(ep.query)) {
      const { description, ...rest } = schema;
      parameters.push({ name, in: 'query', required, ...(description ? { description } : {}), schema: rewriteRefs(rest) });
    }
  }
  parameters.push({ name: 'X-Instance-Slug', in: 'header', required: true, schema: { type: 'string' }, description: 'The tenant slug.' });
  const responses: Json = {};
  const r = ep.response ?? { status: 200 };
  const ref = r.schema ? { $ref: `#/components/schemas/${r.schema}` } : undefined;
  const content = ref
    ? { 'application/json': { schema: r.list ? { type: 'object', required: ['data', 'pagination'], properties: { data: { type: 'array', items: ref }, pagination: { $ref: '#/components/schemas/Pagination' } } } : ref } }
    : undefined;
  responses[String(r.status)] = {
    description: r.status === 204 ? 'No content' : 'Success',
    ...(content && r.status !== 204 ? { content } : {}),
    ...(r.headers ? { headers: Object.fromEntries(r.headers.map((h) => [h, { schema: { type: 'string' } }])) } : {}),
  };
  const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  const codes = new Set<keyof typeof catalog>(['unauthorized', 'forbidden', ...(ep.errors ?? [])]);
  if (ep.query) codes.add('malformed_request');
  if (ep.body) { codes.add('validation_error'); codes.add('unsupported_media_type'); codes.add('malformed_request'); }
  else if (ep.method !== 'get') codes.add('unsupported_media_type');
  const byStatus = new Map<number, string[]>();
  for (const code of codes) byStatus.set(catalog[code].status, [...(byStatus.get(catalog[code].status) ?? []), code]);
  for (const [status, list] of byStatus) responses[String(status)] = { description: `Error codes: ${list.join(', ')}`, content: problem };
  return {
    summary: ep.summary,
    tags: [ep.tag],
    operationId: `${ep.method}${toOpenApiPath(ep.path).replace(/[^A-Za-z0-9]+/g, '_')}`,
    ...(ep.scope ? { 'x-scope': ep.scope } : {}),
    description: ep.scope ? `Scope: \`${ep.scope}\` (or an API key with access_type \`all\`).` : 'Any valid API key of the instance.',
    parameters,
    ...(ep.body ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${ep.body}` } } } } } : {}),
    responses,
    security: [{ apiKey: [] }],
  };
}

export function buildOpenApi(endpoints: Endpoint[], serverUrl: string): Json {
  const paths: Record<string, Json> = {};
  for (const ep of endpoints) {
    const p = toOpenApiPath(ep.path);
    paths[p] = { ...(paths[p] ?? {}), [ep.method]: operation(ep) };
  }
  const schemas: Json = {};
  for (const doc of schemaDocs) schemas[doc.$id] = rewriteRefs(doc);
  return {
    openapi: '3.1.0',
    info: { title: 'Estafeta email delivery API', version: '1.0.0', description: 'Multi-tenant email delivery: send, track, domains, senders, templates, consent (Ley 21.719).' },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'Bearer <prefix>.<key_id>.<token>, together with the X-Instance-Slug header.' } },
    },
  };
}
