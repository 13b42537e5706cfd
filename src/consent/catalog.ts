/**
 * The consent catalog of an account: purposes (what a consent is for) and terms (the legal text,
 * versioned). Managed from the CLI, read through the API. Purposes are never deleted, only
 * disabled (a purpose that has consents must keep its id).
 */
import type { Db } from '../store/db';
import * as store from '../store/consent';
import { insertPurpose } from '../store/catalog';
import { mapPage, type Page, type PageRequest } from '../store/page';
import { ServiceError } from '../errors';
import { iso } from '../lib/time';
import { parseJson } from '../lib/json';
import { channels } from './contacts';

export const termTypes = ['data_processing', 'service_terms', 'marketing', 'subscription', 'other'] as const;

export function presentPurpose(p: store.PurposeRow) {
  return { id: p.id, code: p.code, name: p.name, description: p.description, is_enabled: p.is_enabled === 1 ? 1 : 0 };
}

function invalid(pointer: string, message: string, code = 'value_error'): ServiceError {
  return new ServiceError('validation_error', message, { errors: [{ pointer, code, message }] });
}

// A code is used in `sender --consent CODE:MODE`, so no colon; readable and stable.
const codePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function addPurpose(db: Db, instanceId: number, v: { code: string; name: string; description?: string }, at: number) {
  if (!codePattern.test(v.code)) throw invalid('/code', 'The code is 1-64 letters, digits, _ . or - (starting with a letter or digit).', 'string_pattern_mismatch');
  if (!v.name.trim()) throw invalid('/name', 'The name must not be empty.', 'string_too_short');
  if (store.findPurposeByCode(db, instanceId, v.code)) throw new ServiceError('purpose_already_exists', `Purpose ${v.code} already exists.`);
  const id = insertPurpose(db, instanceId, { code: v.code, name: v.name, description: v.description ?? null, at });
  return presentPurpose(requirePurpose(db, instanceId, id));
}

function requirePurpose(db: Db, instanceId: number, id: number): store.PurposeRow {
  const p = store.findPurpose(db, instanceId, id);
  if (!p) throw new ServiceError('consent_purpose_not_found', `Purpose ${id} does not exist.`);
  return p;
}

export function requirePurposeByCode(db: Db, instanceId: number, code: string): store.PurposeRow {
  const p = store.findPurposeByCode(db, instanceId, code);
  if (!p) throw new ServiceError('consent_purpose_not_found', `Purpose ${code} does not exist.`);
  return p;
}

export function setPurposeEnabled(db: Db, instanceId: number, code: string, enabled: boolean, at: number) {
  const p = requirePurposeByCode(db, instanceId, code);
  store.setPurposeEnabled(db, instanceId, p.id, enabled, at);
  return presentPurpose(requirePurpose(db, instanceId, p.id));
}

export function listPurposes(db: Db, instanceId: number, q: { isEnabled?: boolean }, p: PageRequest) {
  return mapPage(store.listPurposes(db, instanceId, q, p), presentPurpose);
}

// ---- terms

function presentVersion(v: store.TermVersionRow) {
  return { id: v.id, version: v.version, body: v.body, document_url: v.document_url, is_current: v.is_current === 1, published_at: iso(v.published_at) };
}

function presentTerms(db: Db, instanceId: number, rows: store.TermRow[]) {
  const { purposes, versions } = store.termDetails(db, instanceId, rows.map((t) => t.id));
  return rows.map((t) => ({
    id: t.id,
    name: t.name,
    type: t.type,
    purpose_ids: purposes.get(t.id) ?? [],
    channels: parseJson<string[]>(t.channels, []),
    is_active: t.is_active === 1,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
    versions: (versions.get(t.id) ?? []).map(presentVersion),
  }));
}
export type TermObject = ReturnType<typeof presentTerms>[number];

export function requireTerm(db: Db, instanceId: number, id: number): store.TermRow {
  const t = store.findTerm(db, instanceId, id);
  if (!t) throw new ServiceError('consent_term_not_found', `Consent term ${id} does not exist.`);
  return t;
}

export function presentTerm(db: Db, instanceId: number, id: number): TermObject {
  return presentTerms(db, instanceId, [requireTerm(db, instanceId, id)])[0];
}

export function listTerms(db: Db, instanceId: number, p: PageRequest): Page<TermObject> {
  const page = store.listTerms(db, instanceId, p);
  return { ...page, items: presentTerms(db, instanceId, page.items) };
}

export interface NewTerm { name: string; type: string; purposeCodes: string[]; channels: string[]; isActive: boolean }

export function addTerm(db: Db, instanceId: number, v: NewTerm, at: number): TermObject {
  if (!v.name.trim()) throw invalid('/name', 'The name must not be empty.', 'string_too_short');
  if (!termTypes.some((k) => k === v.type)) throw invalid('/type', `The type is one of ${termTypes.join(', ')}.`, 'enum');
  // The spec's dashboard code for it (Errors, 409 codes), as the CLI stands for the dashboard.
  if (v.purposeCodes.length === 0 || v.channels.length === 0) {
    throw new ServiceError('consent_term_missing_channels_or_purposes', 'A term covers at least one purpose and one channel.');
  }
  const chans = [...new Set(v.channels)].map((c, i) => {
    const found = channels.find((k) => k === c);
    if (!found) throw invalid(`/channels/${i}`, `The channel is one of ${channels.join(', ')}.`, 'enum');
    return found;
  });
  const purposeIds = [...new Set(v.purposeCodes.map((code) => requirePurposeByCode(db, instanceId, code).id))];
  const id = store.insertTerm(db, instanceId, { name: v.name, type: v.type, channels: chans, purposeIds, isActive: v.isActive, at });
  return presentTerm(db, instanceId, id);
}

export function addTermVersion(db: Db, instanceId: number, termId: number, v: { version: string; body: string; documentUrl?: string; current: boolean }, at: number): TermObject {
  requireTerm(db, instanceId, termId);
  if (!v.version.trim()) throw invalid('/version', 'The version label must not be empty.', 'string_too_short');
  if (!v.body.trim()) throw invalid('/body', 'The body must not be empty.', 'string_too_short');
  if (v.documentUrl !== undefined && !/^https?:\/\/\S+$/i.test(v.documentUrl)) throw invalid('/document_url', 'The document URL must be an http(s) URL.', 'value_error.url');
  db.transaction(() => {
    // A label names one legal text: a second "v2" would make the history ambiguous.
    if (db.prepare('SELECT 1 FROM consent_term_versions WHERE term_id = ? AND version = ?').get(termId, v.version)) {
      throw invalid('/version', `Version ${v.version} of this term already exists; give the new text a new label.`, 'value_error.duplicate');
    }
    store.insertTermVersion(db, instanceId, termId, { version: v.version, body: v.body, documentUrl: v.documentUrl ?? null, current: v.current, at });
  })();
  return presentTerm(db, instanceId, termId);
}
