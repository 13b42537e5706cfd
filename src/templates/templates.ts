/**
 * Mail templates: validation of what the CLI writes, the two API views (list element without
 * html/config, full detail) and the lookup the send path uses. Deleted templates do not exist.
 */
import type { Db } from '../store/db';
import * as store from '../store/templates';
import { mapPage, type Page, type PageRequest } from '../store/page';
import { ServiceError, type FieldError } from '../errors';
import { iso } from '../lib/time';
import { parseJson } from '../lib/json';

export const templateStatuses: readonly store.TemplateStatus[] = ['draft', 'public'];
export const templateProviders: readonly store.TemplateProvider[] = ['bee', 'ckeditor'];
/** Same limits as a send (spec, Limits): a template must be usable in a send. */
const maxSubject = 254;
const maxBody = 5 * 1024 * 1024;

export function presentTemplateSummary(t: store.TemplateRow) {
  return {
    id: t.id,
    name: t.name,
    subject: t.subject,
    status: t.status,
    description: t.description,
    provider: t.provider,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

export function presentTemplate(t: store.TemplateRow) {
  const { created_at, updated_at, ...head } = presentTemplateSummary(t);
  return { ...head, html: t.html, config: parseJson<Record<string, unknown> | null>(t.config, null), created_at, updated_at };
}
export type TemplateObject = ReturnType<typeof presentTemplate>;

export function listTemplates(db: Db, instanceId: number, q: store.TemplateFilter, p: PageRequest): Page<ReturnType<typeof presentTemplateSummary>> {
  return mapPage(store.listTemplates(db, instanceId, q, p), presentTemplateSummary);
}

export function requireTemplate(db: Db, instanceId: number, id: number): store.TemplateRow {
  const t = store.getTemplate(db, instanceId, id);
  if (!t) throw new ServiceError('mail_template_not_found', `Mail template ${id} does not exist.`);
  return t;
}

/** What the send path needs of a template; undefined when it does not exist (or was deleted). */
export function getTemplateForSend(db: Db, instanceId: number, id: number): { status: store.TemplateStatus; subject: string | null; html: string | null; text: string | null } | undefined {
  const t = store.getTemplate(db, instanceId, id);
  return t && { status: t.status, subject: t.subject, html: t.html, text: t.text };
}

/** Input from the CLI: absent keys are unchanged on update; '' clears subject/description/text. */
export interface TemplateInput {
  name?: string;
  subject?: string;
  status?: string;
  description?: string;
  provider?: string;
  html?: string;
  text?: string;
  /** JSON text of an object. */
  config?: string;
}

const orNull = (v: string | undefined): string | null | undefined => (v === undefined ? undefined : v === '' ? null : v);

function checkInput(v: TemplateInput): Partial<store.TemplateValues> {
  const errors: FieldError[] = [];
  if (v.name !== undefined && v.name.trim() === '') errors.push({ pointer: '/name', code: 'string_too_short', message: 'String should have at least 1 character', params: { min_length: 1 } });
  if (v.subject !== undefined && [...v.subject].length > maxSubject) errors.push({ pointer: '/subject', code: 'string_too_long', message: `String should have at most ${maxSubject} characters`, params: { max_length: maxSubject } });
  if (v.status !== undefined && !(templateStatuses as readonly string[]).includes(v.status)) errors.push({ pointer: '/status', code: 'enum', message: 'Input should be draft or public', params: { expected: templateStatuses.join(', ') } });
  if (v.provider !== undefined && !(templateProviders as readonly string[]).includes(v.provider)) errors.push({ pointer: '/provider', code: 'enum', message: 'Input should be bee or ckeditor', params: { expected: templateProviders.join(', ') } });
  for (const k of ['html', 'text'] as const) {
    if (v[k] !== undefined && Buffer.byteLength(v[k] ?? '', 'utf8') > maxBody) errors.push({ pointer: `/${k}`, code: 'string_too_long', message: 'At most 5 MB of UTF-8', params: { max_length: maxBody } });
  }
  // The spec's dashboard code for a template without a body: a send from it would carry nothing.
  if (v.html !== undefined && v.html.trim() === '') throw new ServiceError('template_content_required', 'A template needs HTML content; the html given is empty.');
  if (v.config !== undefined && !isJsonObject(v.config)) errors.push({ pointer: '/config', code: 'dict_type', message: 'Input should be a JSON object' });
  if (errors.length) throw new ServiceError('validation_error', 'The template does not satisfy the rules.', { errors });
  return {
    name: v.name?.trim(),
    subject: orNull(v.subject),
    status: v.status as store.TemplateStatus | undefined,
    description: orNull(v.description),
    provider: v.provider as store.TemplateProvider | undefined,
    html: orNull(v.html),
    text: orNull(v.text),
    config: v.config,
  };
}

function isJsonObject(text: string): boolean {
  const value = parseJson<unknown>(text, undefined);
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function addTemplate(db: Db, instanceId: number, input: TemplateInput, at: number): store.TemplateRow {
  if (input.name === undefined) throw new ServiceError('validation_error', 'A template needs a name.', { errors: [{ pointer: '/name', code: 'missing', message: 'Field required' }] });
  if (input.html === undefined) throw new ServiceError('validation_error', 'A template needs html.', { errors: [{ pointer: '/html', code: 'missing', message: 'Field required' }] });
  const v = checkInput(input);
  const id = store.insertTemplate(db, instanceId, {
    name: v.name ?? '',
    subject: v.subject ?? null,
    status: v.status ?? 'draft',
    description: v.description ?? null,
    provider: v.provider ?? 'ckeditor',
    html: v.html ?? null,
    text: v.text ?? null,
    config: v.config ?? null,
  }, at);
  return requireTemplate(db, instanceId, id);
}

export function updateTemplate(db: Db, instanceId: number, id: number, input: TemplateInput, at: number): store.TemplateRow {
  const v = checkInput(input);
  if (!store.updateTemplate(db, instanceId, id, v, at)) throw new ServiceError('mail_template_not_found', `Mail template ${id} does not exist.`);
  return requireTemplate(db, instanceId, id);
}

export function deleteTemplate(db: Db, instanceId: number, id: number, at: number): void {
  if (!store.deleteTemplate(db, instanceId, id, at)) throw new ServiceError('mail_template_not_found', `Mail template ${id} does not exist.`);
}
