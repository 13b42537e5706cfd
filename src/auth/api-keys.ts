/**
 * API keys: `est.<key_id>.<token>`. Only SHA-256(token) is stored; comparison is constant time.
 * authenticate() answers who is calling (or one indistinguishable 401); authorize() answers
 * whether they may do this (403, then ip_not_allowed, in the order the spec gives).
 */
import crypto from 'node:crypto';
import type { Db } from '../store/db';
import * as store from '../store/api-keys';
import { findInstanceBySlug, type InstanceRow } from '../store/instances';
import { readFresh, revalidateFresh } from '../store/fresh';
import { ServiceError, generic } from '../errors';
import { parseJson } from '../lib/json';
import { randomToken, sha256 } from '../lib/tokens';
import { iso } from '../lib/time';
import { ipAllowed, parseCidrList } from './ip-allow';

export const keyPrefix = 'est';

export const scopes = [
  'mail:send', 'mail:read', 'domains:read', 'domains:write', 'senders:read', 'templates:read',
  'field:read', 'form:read', 'consent:read', 'consent:write',
] as const;
export type Scope = (typeof scopes)[number];

export interface Principal {
  instance: InstanceRow;
  key: store.ApiKeyRow;
}

export function presentApiKey(k: store.ApiKeyRow, apiKey?: string) {
  return {
    id: k.id,
    key_id: k.key_id,
    ...(apiKey === undefined ? {} : { api_key: apiKey }),
    name: k.name,
    access_type: k.access_type,
    scopes: parseJson<string[]>(k.scopes, []),
    ip_allow: parseJson<string[]>(k.ip_allow, []),
    created_at: iso(k.created_at),
    revoked_at: iso(k.revoked_at),
  };
}

export function createApiKey(
  db: Db,
  instance: InstanceRow,
  v: { name?: string; scopes?: string[] | 'all'; ipAllow?: string[] },
  at: number,
) {
  if (v.name !== undefined && v.name.trim() === '') {
    throw new ServiceError('validation_error', 'The key name must not be empty (omit --name for none).', {
      errors: [{ pointer: '/name', code: 'string_too_short', message: 'String should have at least 1 character', params: { min_length: 1 } }],
    });
  }
  const accessType = v.scopes === undefined || v.scopes === 'all' ? 'all' : 'scoped';
  const list = Array.isArray(v.scopes) ? [...new Set(v.scopes)] : [];
  if (accessType === 'scoped') {
    if (list.length === 0) throw new ServiceError('api_key_scope_required', 'A scoped key needs at least one scope.');
    const unknown = list.filter((s) => !(scopes as readonly string[]).includes(s));
    if (unknown.length) {
      throw new ServiceError('validation_error', `Unknown scope: ${unknown.join(', ')}`, {
        errors: [{ pointer: '/scopes', code: 'enum', message: `unknown scope ${unknown[0]}`, params: { expected: scopes.join(', ') } }],
      });
    }
    if (!instance.scoped_keys_allowed) {
      throw new ServiceError('plan_api_access_control_unavailable', 'The plan does not include API access control (scoped keys).');
    }
  }
  const ipAllow = parseCidrList(v.ipAllow ?? [], '/ip_allow');
  const keyId = randomToken(16);
  const token = randomToken(40);
  store.insertApiKey(db, instance.id, { keyId, name: v.name ?? null, tokenHash: sha256(token), accessType, scopes: list, ipAllow, at });
  const row = store.findApiKey(db, keyId) as store.ApiKeyRow;
  return presentApiKey(row, `${keyPrefix}.${keyId}.${token}`);
}

export function revokeKey(db: Db, instanceId: number, keyId: string, at: number): void {
  if (!store.revokeApiKey(db, instanceId, keyId, at)) throw new ServiceError('api_key_not_found', `API key ${keyId} does not exist.`);
}

const unauthorized = (): ServiceError => new ServiceError('unauthorized', generic.unauthorized as string, {}, { 'WWW-Authenticate': 'Bearer' });
// Compared against when the key is unknown, so an unknown key costs the same as a wrong token.
const dummyHash = sha256(randomToken(40));

/** Every failure is the same 401: which part was wrong is never told (no slug enumeration). */
export function authenticate(db: Db, authorization: string | undefined, slug: string | undefined): Principal {
  // The auth scheme is case-insensitive and followed by 1*SP (RFC 9110 §11.1, RFC 6750 §2.1).
  const m = /^Bearer +([^\s]+)$/i.exec(authorization?.trim() ?? '');
  const parts = m ? m[1].split('.') : [];
  const [prefix, keyId, token] = parts.length === 3 ? parts : ['', '', ''];
  // Every request and SMTP message is authenticated first: the fresh cache is revalidated here,
  // so a revoke, disable or limit change by the CLI acts on the next request.
  revalidateFresh(db);
  const wanted = slug ? slug.trim().toLowerCase() : '';
  const instance = wanted ? readFresh(db, `instance-slug:${wanted}`, () => findInstanceBySlug(db, wanted)) : undefined;
  const key = keyId ? readFresh(db, `api-key:${keyId}`, () => store.findApiKey(db, keyId)) : undefined;
  const tokenOk = crypto.timingSafeEqual(sha256(token), key ? Buffer.from(key.token_hash) : dummyHash);
  if (prefix !== keyPrefix || !instance || !key || !tokenOk || key.revoked_at !== null || key.instance_id !== instance.id) {
    throw unauthorized();
  }
  return { instance, key };
}

export function hasScope(p: Principal, scope: Scope): boolean {
  return p.key.access_type === 'all' || parseJson<string[]>(p.key.scopes, []).includes(scope);
}

/** 403: an API key never operates a disabled instance, whatever path or verb it asks for. */
export function requireActiveInstance(p: Principal): void {
  if (!p.instance.is_active) throw new ServiceError('forbidden', generic.forbidden as string);
}

/** 403 for a disabled instance or a missing scope; only then 403 ip_not_allowed. */
export function authorize(p: Principal, scope: Scope | null, remoteIp: string): void {
  requireActiveInstance(p);
  if (scope !== null && !hasScope(p, scope)) throw new ServiceError('forbidden', generic.forbidden as string);
  const allowed = ipAllowed(remoteIp, parseJson<string[]>(p.instance.ip_allow, [])) && ipAllowed(remoteIp, parseJson<string[]>(p.key.ip_allow, []));
  if (!allowed) throw new ServiceError('ip_not_allowed', generic.ip_not_allowed as string);
}
