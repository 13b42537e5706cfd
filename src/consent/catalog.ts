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

/** Seeded purposes included (spec: "two seeded, editable purposes"); the code, which senders name, stays. */
export function updatePurpose(db: Db, instanceId: number, code: string, v: { name?: string; description?: string | null }, at: number) {
  const p = requirePurposeByCode(db, instanceId, code);
  const name = v.name ?? p.name;
  if (!name.trim()) throw invalid('/name', 'The name must not be empty.', 'string_too_short');
  store.updatePurpose(db, instanceId, p.id, { name, description: v.description === undefined ? p.description : v.description, at });
  return presentPurpose(requirePurpose(db, instanceId, p.id));
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

/** A term's fields checked as `term add` and `term update` take them: channels known, purposes of the account. */
function checkTerm(db: Db, instanceId: number, v: NewTerm): { channels: store.Channel[]; purposeIds: number[] } {
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
  return { channels: chans, purposeIds: [...new Set(v.purposeCodes.map((code) => requirePurposeByCode(db, instanceId, code).id))] };
}

export function addTerm(db: Db, instanceId: number, v: NewTerm, at: number): TermObject {
  const checked = checkTerm(db, instanceId, v);
  const id = store.insertTerm(db, instanceId, { name: v.name, type: v.type, ...checked, isActive: v.isActive, at });
  return presentTerm(db, instanceId, id);
}

/**
 * Changes what a term says it covers, or withdraws it (`is_active` false: new consents are refused
 * 409 consent_term_inactive; those given stay, as the history must). Unnamed fields keep their value.
 */
export function updateTerm(db: Db, instanceId: number, termId: number, v: Partial<NewTerm>, at: number): TermObject {
  const current = presentTerm(db, instanceId, termId);
  const codes = new Map(store.allPurposes(db, instanceId).map((p) => [p.id, p.code]));
  const merged: NewTerm = {
    name: v.name ?? current.name,
    type: v.type ?? current.type,
    purposeCodes: v.purposeCodes ?? current.purpose_ids.map((id) => codes.get(id) ?? ''),
    channels: v.channels ?? current.channels,
    isActive: v.isActive ?? current.is_active,
  };
  const checked = checkTerm(db, instanceId, merged);
  store.updateTerm(db, instanceId, termId, { name: merged.name, type: merged.type, ...checked, isActive: merged.isActive, at });
  return presentTerm(db, instanceId, termId);
}

/** Makes a published version (named by its label) the term's only current one: what new consents record. */
export function makeVersionCurrent(db: Db, instanceId: number, termId: number, version: string, at: number): TermObject {
  const term = presentTerm(db, instanceId, termId);
  const found = term.versions.find((x) => x.version === version);
  if (!found) throw invalid('/version', `The term has no version ${version}; publish it with "term version add".`, 'value_error.not_found');
  store.setCurrentVersion(db, instanceId, termId, found.id, at);
  return presentTerm(db, instanceId, termId);
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
