/**
 * The JSON Schemas of schema/ loaded once into one ajv: the same documents validate requests at
 * run time and build /openapi.json. ajv errors become the spec's 422 items (pointer, code,
 * message, params) here, in one place.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { schemaDir } from './paths';
import { pointerToken, ServiceError, validationError, type FieldError } from '../errors';

export type SchemaDoc = Record<string, unknown> & { $id: string };

function readSchemas(dir: string): SchemaDoc[] {
  const out: SchemaDoc[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...readSchemas(full));
    else if (entry.name.endsWith('.json') && entry.name !== 'config.schema.json') {
      out.push(JSON.parse(fs.readFileSync(full, 'utf8')) as SchemaDoc);
    }
  }
  return out;
}

export const schemaDocs: SchemaDoc[] = readSchemas(schemaDir);

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes: coerce ? 'array' : false });
  addFormats(ajv);
  for (const s of schemaDocs) ajv.addSchema(s);
  return ajv;
}

const bodyAjv = makeAjv(false);
// Query strings are text: coerce "2" → 2, "true" → true; what cannot be coerced is malformed.
const queryAjv = makeAjv(true);

function compiled(ajv: Ajv, id: string): ValidateFunction {
  const v = ajv.getSchema(id);
  if (!v) throw new Error(`schema ${id} is not loaded`);
  return v;
}

const typeCodes: Record<string, string> = { integer: 'int_parsing', number: 'float_parsing', boolean: 'bool_parsing', string: 'string_type', array: 'list_type', object: 'dict_type', null: 'none_required' };

export function toFieldError(e: ErrorObject): FieldError {
  const p = e.params as Record<string, unknown>;
  let pointer = e.instancePath;
  let code: string;
  let message = e.message ?? 'is invalid';
  let params: Record<string, unknown> = {};
  switch (e.keyword) {
    case 'required':
      pointer = `${e.instancePath}/${pointerToken(String(p.missingProperty))}`;
      code = 'missing';
      message = 'Field required';
      break;
    case 'additionalProperties':
      pointer = `${e.instancePath}/${String(p.additionalProperty)}`;
      code = 'extra_forbidden';
      message = 'Extra inputs are not permitted';
      break;
    case 'maxLength': code = 'string_too_long'; params = { max_length: p.limit }; break;
    case 'minLength': code = 'string_too_short'; params = { min_length: p.limit }; break;
    case 'pattern': code = 'string_pattern_mismatch'; params = { pattern: p.pattern }; break;
    case 'type': code = typeCodes[String(Array.isArray(p.type) ? p.type[0] : p.type)] ?? 'type_error'; params = { expected: Array.isArray(p.type) ? p.type.join(', ') : p.type }; break;
    case 'enum': code = 'enum'; params = { expected: (p.allowedValues as unknown[]).map(String).join(', ') }; break;
    case 'const': code = 'literal_error'; params = { expected: p.allowedValue }; break;
    case 'format': code = `value_error.${String(p.format)}`; params = { format: p.format }; break;
    case 'minItems': code = 'too_short'; params = { min_length: p.limit }; break;
    case 'maxItems': code = 'too_long'; params = { max_length: p.limit }; break;
    case 'maxProperties': code = 'too_long'; params = { max_length: p.limit }; break;
    case 'minimum': code = 'greater_than_equal'; params = { ge: p.limit }; break;
    case 'maximum': code = 'less_than_equal'; params = { le: p.limit }; break;
    case 'exclusiveMinimum': code = 'greater_than'; params = { gt: p.limit }; break;
    case 'exclusiveMaximum': code = 'less_than'; params = { lt: p.limit }; break;
    case 'uniqueItems': code = 'value_error.unique'; break;
    default: code = 'value_error';
  }
  const item: FieldError = { pointer, code, message };
  if (Object.keys(params).length) item.params = params;
  return item;
}

/** One item per field: ajv can report several keywords for one pointer (anyOf branches). */
function fieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors ?? []) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const item = toFieldError(e);
    if (seen.has(item.pointer)) continue;
    seen.add(item.pointer);
    out.push(item);
  }
  // An "X or null" field whose object failed on its members: the null branch's "must be null" at
  // the field itself says nothing the members' errors do not (reply_to {"email": "nope"}).
  return out.filter((e) => e.code !== 'none_required' || !out.some((o) => o.pointer.startsWith(`${e.pointer}/`)));
}

/** Items or keys past which a body is read no further (valid bodies hold a few dozen). */
const bodyItemCap = 1000;

/**
 * A request body as validation reads it: in the first levels, where schemas look at every item
 * and key (the fields, the recipients and attachments, their members, the headers), arrays and
 * objects are cut to `bodyItemCap + 1` items, which still breaks every count limit they break.
 * Without it a 20 MB body of a million bad recipients made a million errors (~1 GB, seconds of
 * the one event loop). A body within the cap is returned as it is.
 */
export function boundedBody(data: unknown, schemaId?: string): unknown {
  if (!oversized(data, 3)) return data; // a valid body is not copied
  // The fields the schema declares are kept first: a cut never makes a present field "missing".
  const declared = new Set(Object.keys((schemaDocs.find((d) => d.$id === schemaId)?.properties ?? {}) as object));
  return cut(data, 3, declared);
}

function oversized(data: unknown, depth: number): boolean {
  if (depth === 0 || typeof data !== 'object' || data === null) return false;
  if (Array.isArray(data)) return data.length > bodyItemCap + 1 || data.some((v) => oversized(v, depth - 1));
  let keys = 0;
  for (const k in data) {
    if (++keys > bodyItemCap + 1 || oversized((data as Record<string, unknown>)[k], depth - 1)) return true;
  }
  return false;
}

function cut(data: unknown, depth: number, first: Set<string> = new Set()): unknown {
  if (depth === 0 || typeof data !== 'object' || data === null) return data;
  if (Array.isArray(data)) return data.slice(0, bodyItemCap + 1).map((v) => cut(v, depth - 1));
  const keys = Object.keys(data);
  const ordered = first.size ? [...keys.filter((k) => first.has(k)), ...keys.filter((k) => !first.has(k))] : keys;
  return Object.fromEntries(ordered.slice(0, bodyItemCap + 1).map((k) => [k, cut((data as Record<string, unknown>)[k], depth - 1)]));
}

/** A request body's schema failures, one item per field (none: it is valid). */
export function bodyErrors(id: string, data: unknown): FieldError[] {
  const v = compiled(bodyAjv, id);
  return v(data) ? [] : fieldErrors(v.errors);
}

/** Validates a request body: 422 validation_error with errors[] on failure. */
export function validateBody<T>(id: string, data: unknown): T {
  const errors = bodyErrors(id, boundedBody(data, id));
  if (errors.length > 0) throw new ServiceError('validation_error', 'The request body does not satisfy the schema.', { errors });
  return data as T;
}

/** Validates (and coerces) query parameters: 400 malformed_request on failure (spec, Errors). */
/** The spellings of a boolean query value that HTTP frameworks accept (any case). */
const booleanWords: Record<string, string> = { true: 'true', t: 'true', yes: 'true', y: 'true', on: 'true', 1: 'true', false: 'false', f: 'false', no: 'false', n: 'false', off: 'false', 0: 'false' };

export interface QueryParameter { name: string; schema: Record<string, unknown> & { type?: unknown }; required: boolean }

/**
 * A query schema's parameters, those of the schemas it includes first (`allOf: [{$ref:
 * PageQuery}]`): what validateQuery pre-checks and what /openapi.json lists.
 */
export function queryParameters(id: string): QueryParameter[] {
  const doc = schemaDocs.find((d) => d.$id === id);
  if (!doc) return [];
  const included = ((doc.allOf ?? []) as { $ref?: string }[]).flatMap((s) => (s.$ref ? queryParameters(s.$ref) : []));
  const required = new Set((doc.required as string[] | undefined) ?? []);
  const own = Object.entries((doc.properties ?? {}) as Record<string, QueryParameter['schema']>).map(([name, schema]) => ({ name, schema, required: required.has(name) }));
  return [...included, ...own];
}

/** Names of the parameters of a query schema that take a `type` (read once per schema and type). */
const typedParams = new Map<string, string[]>();
function paramsOf(id: string, type: 'boolean' | 'integer' | 'array'): string[] {
  let names = typedParams.get(`${id} ${type}`);
  if (!names) {
    names = queryParameters(id).filter(({ schema: p }) => p.type === type || (Array.isArray(p.type) && p.type.includes(type))).map((p) => p.name);
    typedParams.set(`${id} ${type}`, names);
  }
  return names;
}

/** The first declared parameter of one value that was given several times, if any. */
function repeatedScalar(id: string, query: Record<string, unknown>): string | undefined {
  return Object.keys(query).find((name) => Array.isArray(query[name]) && declaredParams(id).has(name) && !paramsOf(id, 'array').includes(name));
}

// An integer in a query is written in decimal digits: ajv's coercion also takes `1e1`, `0x5`
// and `5.0`, which no client means as a page number.
const decimalInteger = /^[+-]?\d+$/;

export function validateQuery<T>(id: string, query: Record<string, unknown>): T {
  const copy: Record<string, unknown> = { ...query };
  // A NUL ends a pattern in SQLite's LIKE ("%Team\0zzz%" matches as "%Team"): no text filter can
  // mean it, so it is a malformed parameter rather than a filter that silently matches more.
  for (const [name, v] of Object.entries(copy)) {
    if ((Array.isArray(v) ? v : [v]).some((x) => typeof x === 'string' && x.includes('\0'))) {
      throw new ServiceError('malformed_request', `Query parameter ${name} is malformed: it contains a NUL character.`);
    }
  }
  // Spec, GET /v1/activities/sent: recipient_operator is "ignored without recipient", whatever it says.
  if (copy.recipient === undefined && declaredParams(id).has('recipient_operator')) delete copy.recipient_operator;
  // A parameter of one value given twice (`?status=1&status=2`) is malformed whatever its type,
  // before its values are judged: which one was meant cannot be told.
  const repeated = repeatedScalar(id, copy);
  if (repeated) throw new ServiceError('malformed_request', `Query parameter ${repeated} is malformed: it takes one value and was given several.`);
  // ajv coerces only "true"/"false": `?is_active=1` or `=TRUE` is just as clear a boolean.
  for (const name of paramsOf(id, 'boolean')) {
    const v = copy[name];
    if (typeof v === 'string' && booleanWords[v.trim().toLowerCase()] !== undefined) copy[name] = booleanWords[v.trim().toLowerCase()];
  }
  for (const name of paramsOf(id, 'integer')) {
    const v = copy[name];
    // Past 2^53 a number is no longer the integer written: no id or count gets there.
    if (typeof v === 'string' && (!decimalInteger.test(v.trim()) || !Number.isSafeInteger(Number(v)))) {
      throw new ServiceError('malformed_request', `Query parameter ${name} is malformed: must be an integer of at most ${Number.MAX_SAFE_INTEGER}.`);
    }
  }
  const v = compiled(queryAjv, id);
  if (!v(copy)) {
    // Spec, Errors: 400 is a parameter "malformed, rejected before schema validation": one that
    // does not read as its type (an integer, a boolean, one value, a YYYY-MM-DD date). A value
    // that reads but breaks the schema (a page_size of 101, a status of 8, an enum it does not
    // list, a missing list) is 422 with its errors[], as CONTRACT §6 splits bodies.
    const unreadable = (v.errors ?? []).find((e) => e.keyword === 'type' || e.keyword === 'pattern' || e.keyword === 'format');
    if (unreadable) {
      // errors[] is a 422-only member (spec, Errors): the 400 names the parameter in its detail.
      const first = toFieldError(unreadable);
      throw new ServiceError('malformed_request', `Query parameter ${first.pointer.slice(1).split('/')[0]} is malformed: ${first.message}.`);
    }
    const errors = fieldErrors(v.errors);
    throw validationError(errors, `Query parameter ${errors[0]?.pointer.slice(1).split('/')[0] ?? ''} is invalid: ${errors[0]?.message ?? 'invalid'}.`);
  }
  // Unknown parameters are ignored (README), so none reaches a route unvalidated: a shared
  // filter read `recipient` from a route that does not declare it and threw on `?recipient=a&recipient=b`.
  const declared = declaredParams(id);
  return Object.fromEntries(Object.entries(copy).filter(([name]) => declared.has(name))) as T;
}

const declaredByQuery = new Map<string, Set<string>>();
function declaredParams(id: string): Set<string> {
  let names = declaredByQuery.get(id);
  if (!names) declaredByQuery.set(id, (names = new Set(queryParameters(id).map((p) => p.name))));
  return names;
}
