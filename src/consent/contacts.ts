/**
 * Identifiers in consent rules: which identifier types fit which channel (spec, POST
 * /v1/consent-events) and the canonical stored form (emails trimmed and lowercased; anything else
 * exactly as sent: uniquecodes are case-sensitive).
 */
import { normalizeEmail } from '../lib/address';
import type { Channel, ContactType } from '../store/consent';

export const channels: readonly Channel[] = ['mail', 'sms', 'wsp', 'call', 'push'];

const fits: Record<Channel, readonly ContactType[]> = {
  mail: ['email_address', 'uniquecode'],
  sms: ['phone_number', 'uniquecode'],
  wsp: ['phone_number', 'uniquecode'],
  call: ['phone_number', 'uniquecode'],
  push: ['uniquecode'],
};

export const typeFitsChannel = (type: ContactType, channel: Channel): boolean => fits[channel].includes(type);

export const channelsFor = (type: ContactType): Channel[] => channels.filter((c) => typeFitsChannel(type, c));

/** The stored form of a valid email address, or null when it is not one. */
export function canonicalEmail(input: string): string | null {
  const e = normalizeEmail(input);
  return e === null ? null : e.toLowerCase();
}

/** The form an identifier is compared in: emails canonical when valid (else trimmed, lowercased), others as given. */
export function comparableContact(type: ContactType, contact: string): string {
  if (type !== 'email_address') return contact;
  return canonicalEmail(contact) ?? contact.trim().toLowerCase();
}
