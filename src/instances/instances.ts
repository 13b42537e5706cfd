/**
 * Instances (tenants): creation provisions what every account starts with (spec + CONTRACT §3):
 * the sandbox domain <slug>.sandbox.test (verified) and its sender, the purposes `marketing` and
 * `newsletter`, and the six system fields. Limits and activation are changed from the CLI.
 */
import type { Db } from '../store/db';
import * as store from '../store/instances';
import { insertField, insertPurpose } from '../store/catalog';
import { insertSender } from '../store/senders';
import { ServiceError } from '../errors';
import { parseJson } from '../lib/json';
import { provisionSandboxDomain } from '../domains/domains';
import { generateDomainKeys } from '../domains/dkim-keys';
import { sandboxSuffix } from '../lib/address';
import { parseCidrList } from '../auth/ip-allow';

export const systemFields = [
  { key: 'EMAIL', name: 'Email', type: 'email' },
  { key: 'PHONE', name: 'Phone', type: 'phone' },
  { key: 'FIRST_NAME', name: 'First name', type: 'text' },
  { key: 'LAST_NAME', name: 'Last name', type: 'text' },
  { key: 'UNIQUECODE', name: 'Unique code', type: 'text' },
  { key: 'ADDRESS', name: 'Address', type: 'address' },
] as const;

const slugPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const sandboxDomainOf = (slug: string): string => `${slug}.${sandboxSuffix}`;

export function presentInstance(i: store.InstanceRow) {
  const sandboxDomain = sandboxDomainOf(i.slug);
  return {
    id: i.id,
    slug: i.slug,
    name: i.name,
    timezone: i.timezone,
    is_active: i.is_active === 1,
    sandbox_domain: sandboxDomain,
    sandbox_sender: `sandbox@${sandboxDomain}`,
  };
}

export function presentLimits(i: store.InstanceRow) {
  return {
    slug: i.slug,
    send_limit: i.send_limit,
    send_cycle_days: i.send_cycle_days,
    max_domains: i.max_domains,
    max_senders: i.max_senders,
    attachment_max_bytes: i.attachment_max_bytes,
    bandwidth_bytes_per_second: i.bandwidth_bytes_per_second,
    bandwidth_burst_bytes: i.bandwidth_burst_bytes,
    ip_allow: parseJson<string[]>(i.ip_allow, []),
    subscription: i.subscription_active === 1 ? 'active' : 'inactive',
    scoped_keys: i.scoped_keys_allowed === 1 ? 'allowed' : 'unavailable',
  };
}

function invalid(pointer: string, message: string): ServiceError {
  return new ServiceError('validation_error', message, { errors: [{ pointer, code: 'value_error', message }] });
}

export function createInstance(db: Db, v: { slug: string; name?: string; timezone?: string }, at: number): store.InstanceRow {
  const slug = v.slug.trim().toLowerCase();
  if (!slugPattern.test(slug)) throw invalid('/slug', 'slug must be 1-63 lowercase letters, digits or hyphens');
  // Every named thing of the CLI refuses an empty name (templates, fields, forms, terms): an
  // instance too, rather than one listed as "".
  if (v.name !== undefined && v.name.trim() === '') throw invalid('/name', 'name must not be empty (omit --name to use the slug)');
  const typed = v.timezone ?? 'UTC';
  if (!isValidTimezone(typed)) throw invalid('/timezone', `unknown IANA time zone: ${typed}`);
  // Zone names match in any case; the instance keeps the canonical spelling (america/santiago
  // is shown and compared as America/Santiago). Only the case: ICU's canonical name of a renamed
  // zone is the old one (Europe/Kyiv resolves to Europe/Kiev), and the operator's name stays.
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: typed }).resolvedOptions().timeZone;
  const timezone = resolved.toLowerCase() === typed.toLowerCase() ? resolved : typed;
  if (store.findInstanceBySlug(db, slug)) throw new ServiceError('instance_already_exists', `Instance ${slug} already exists.`);
  const keys = generateDomainKeys(); // before the write lock: ~200 ms of RSA
  const id = db.transaction(() => {
    // Again under the lock: a concurrent create may have taken the slug during the RSA.
    if (store.findInstanceBySlug(db, slug)) throw new ServiceError('instance_already_exists', `Instance ${slug} already exists.`);
    const instanceId = store.insertInstance(db, { slug, name: v.name ?? slug, timezone, at });
    const domain = sandboxDomainOf(slug);
    const domainId = provisionSandboxDomain(db, instanceId, domain, keys, at);
    insertSender(db, instanceId, { domainId, name: 'Sandbox', email: `sandbox@${domain}`, at });
    insertPurpose(db, instanceId, { code: 'marketing', name: 'Marketing', description: 'Commercial and promotional communications.', at });
    insertPurpose(db, instanceId, { code: 'newsletter', name: 'Newsletter', description: 'Periodic editorial newsletters.', at });
    for (const f of systemFields) insertField(db, instanceId, { name: f.name, key: f.key, type: f.type, isSystem: true, at });
    return instanceId;
  })();
  return store.getInstance(db, id);
}

export function requireInstance(db: Db, slug: string): store.InstanceRow {
  const i = store.findInstanceBySlug(db, slug.trim().toLowerCase());
  if (!i) throw new ServiceError('instance_not_found', `Instance ${slug} does not exist.`);
  return i;
}

export interface LimitsInput {
  sendLimit?: number | null;
  sendCycleDays?: number;
  maxDomains?: number | null;
  maxSenders?: number | null;
  attachmentMaxBytes?: number;
  bandwidthBytesPerSecond?: number | null;
  bandwidthBurstBytes?: number | null;
  ipAllow?: string[];
  subscription?: 'active' | 'inactive';
  scopedKeys?: 'allowed' | 'unavailable';
}

export function updateLimits(db: Db, instanceId: number, v: LimitsInput, at: number): store.InstanceRow {
  const changes: Partial<Record<store.LimitColumn, unknown>> = {};
  if (v.sendLimit !== undefined) changes.send_limit = v.sendLimit;
  if (v.sendCycleDays !== undefined) changes.send_cycle_days = v.sendCycleDays;
  if (v.maxDomains !== undefined) changes.max_domains = v.maxDomains;
  if (v.maxSenders !== undefined) changes.max_senders = v.maxSenders;
  if (v.attachmentMaxBytes !== undefined) changes.attachment_max_bytes = v.attachmentMaxBytes;
  if (v.bandwidthBytesPerSecond !== undefined) changes.bandwidth_bytes_per_second = v.bandwidthBytesPerSecond;
  if (v.bandwidthBurstBytes !== undefined) changes.bandwidth_burst_bytes = v.bandwidthBurstBytes;
  if (v.ipAllow !== undefined) changes.ip_allow = JSON.stringify(parseCidrList(v.ipAllow, '/ip_allow'));
  if (v.subscription !== undefined) changes.subscription_active = v.subscription === 'active' ? 1 : 0;
  if (v.scopedKeys !== undefined) changes.scoped_keys_allowed = v.scopedKeys === 'allowed' ? 1 : 0;
  store.updateInstanceLimits(db, instanceId, changes, at);
  return store.getInstance(db, instanceId);
}
