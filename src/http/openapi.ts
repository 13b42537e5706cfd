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

/** Response headers the spec names: on every response, on each 401 and on each 429. */
const headerSchemas: Record<string, Json> = {
  'X-Request-Id': { description: 'The client\'s X-Request-Id, or a generated UUID.', schema: { type: 'string' } },
  'WWW-Authenticate': { description: 'Always `Bearer`, without realm or error parameters.', schema: { type: 'string', const: 'Bearer' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
};
const errorHeaders: Record<number, string[]> = { 401: ['WWW-Authenticate'], 429: ['Retry-After'] };
const headers = (names: string[]): Json => Object.fromEntries(names.map((h) => [h, headerSchemas[h] ?? { schema: { type: 'string' } }]));

/**
 * The request body: JSON, and for a route that also reads multipart/form-data the same fields as
 * text parts (arrays and objects as JSON strings) with `attachments` as binary file parts.
 */
function requestContent(body: string, multipart: boolean): Json {
  const json = { 'application/json': { schema: { $ref: `#/components/schemas/${body}` } } };
  if (!multipart) return json;
  // "X or null" fields (reply_to) are structured too: their object travels as a JSON string.
  const isStructured = (schema: Json): boolean => {
    const type = schema.type;
    return schema.$ref !== undefined || type === 'array' || type === 'object' || (Array.isArray(type) && (type.includes('array') || type.includes('object')))
      || (Array.isArray(schema.anyOf) && (schema.anyOf as Json[]).some(isStructured));
  };
  const doc = schemaDocs.find((d) => d.$id === body) as (SchemaDoc & { properties?: Record<string, Json>; required?: string[] }) | undefined;
  const properties: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(doc?.properties ?? {})) {
    const structured = isStructured(schema);
    if (name === 'attachments') properties[name] = { type: 'array', items: { type: 'string', contentMediaType: 'application/octet-stream' }, description: 'File parts: each part\'s filename and Content-Type are the attachment\'s; at most 10 MB each.' };
    else properties[name] = structured ? { type: 'string', contentMediaType: 'application/json', description: `The JSON value of "${name}" (see the JSON body).` } : rewriteRefs(schema) as Json;
  }
  return { ...json, 'multipart/form-data': { schema: { type: 'object', required: doc?.required ?? [], properties }, encoding: { attachments: { contentType: 'application/octet-stream' } } } };
}

const bodyDescription = (multipart: boolean): string =>
  `The body may be sent with \`Content-Encoding: gzip\`; its size limit (413 request_too_large with max_bytes) holds for the bytes transferred and for the inflated bytes.${
    multipart ? ' As multipart/form-data, every field is a text part (arrays and objects as JSON strings) and `attachments` are binary file parts; a text part named `attachments` is 422.' : ''}`;

function operation(ep: Endpoint): Json {
  const parameters: Json[] = [];
  for (const [name, type] of Object.entries(ep.params ?? {})) parameters.push({ name, in: 'path', required: true, schema: { type } });
  if (ep.query) {
    for (const { name, schema, required } of queryParameters(ep.query)) {
      const { description, ...rest } = schema;
      const defaults = name === 'page_size' && rest.default === undefined ? { default: ep.pageSize ?? 20 } : {};
      parameters.push({ name, in: 'query', required, ...(description ? { description } : {}), schema: { ...(rewriteRefs(rest) as Json), ...defaults } });
    }
  }
  parameters.push({ name: 'X-Instance-Slug', in: 'header', required: true, schema: { type: 'string' }, description: 'The tenant slug.' });
  parameters.push({ name: 'X-Request-Id', in: 'header', required: false, schema: { type: 'string' }, description: 'Echoed in the response; generated (a UUID) when absent.' });
  const responses: Json = {};
  const r = ep.response ?? { status: 200 };
  const ref = r.schema ? { $ref: `#/components/schemas/${r.schema}` } : undefined;
  const content: Json | undefined = ref
    ? { 'application/json': { schema: r.list ? { type: 'object', required: ['data', 'pagination'], properties: { data: { type: 'array', items: ref }, pagination: { $ref: '#/components/schemas/Pagination' } } } : ref } }
    : undefined;
  if (content && r.csv) content['text/csv'] = { schema: { type: 'string', description: 'A header row, then one row per item (the JSON form\'s fields).' } };
  responses[String(r.status)] = {
    description: r.status === 204 ? 'No content' : 'Success',
    ...(content && r.status !== 204 ? { content } : {}),
    headers: headers(['X-Request-Id', ...(r.headers ?? [])]),
  };
  const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  const codes = new Set<keyof typeof catalog>(['unauthorized', 'forbidden', 'ip_not_allowed', ...(ep.errors ?? [])]);
  if (ep.query) { codes.add('malformed_request'); codes.add('validation_error'); }
  if (ep.body) { codes.add('validation_error'); codes.add('unsupported_media_type'); codes.add('malformed_request'); codes.add('request_too_large'); }
  else if (ep.method !== 'get') codes.add('request_too_large'); // a body sent anyway is dropped unread, its size bounded (noBody)
  const byStatus = new Map<number, string[]>();
  for (const code of codes) byStatus.set(catalog[code].status, [...(byStatus.get(catalog[code].status) ?? []), code]);
  for (const [status, list] of byStatus) {
    responses[String(status)] = { description: `Error codes: ${list.join(', ')}`, headers: headers(['X-Request-Id', ...(errorHeaders[status] ?? [])]), content: problem };
  }
  // What any route can answer: an unknown path (404 not_found), a verb the path does not take
  // (405 method_not_allowed, with Allow), an unexpected failure (500 internal_error).
  responses.default = { description: 'Error codes: not_found (404, unknown route), method_not_allowed (405, with an Allow header), uri_too_long (414, a request line over 16 KB), request_header_fields_too_large (431), not_implemented (501, a method no registry knows), internal_error (500)', headers: { ...headers(['X-Request-Id']), Allow: { description: 'On a 405: the methods the path accepts (a GET path also HEAD).', schema: { type: 'string' } } }, content: problem };
  return {
    summary: ep.summary,
    tags: [ep.tag],
    operationId: `${ep.method}${toOpenApiPath(ep.path).replace(/[^A-Za-z0-9]+/g, '_')}`,
    ...(ep.scope ? { 'x-scope': ep.scope } : {}),
    description: ep.scope ? `Scope: \`${ep.scope}\` (or an API key with access_type \`all\`).` : 'Any valid API key of the instance.',
    parameters,
    ...(ep.body ? { requestBody: { required: true, description: bodyDescription(ep.multipart === true), content: requestContent(ep.body, ep.multipart === true) } } : {}),
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
