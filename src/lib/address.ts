/**
 * Domain names and mail addresses in canonical form: lowercase domain, no trailing dot,
 * internationalized names in ASCII (punycode) form. Returns null for anything invalid, so each
 * door can say it its own way (422 pointer, SMTP 501).
 */
import { domainToASCII } from 'node:url';

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** One DNS label of a host name (letters, digits, inner hyphens; 1-63), any case. */
export const isHostLabel = (l: string): boolean => label.test(l.toLowerCase());

export function normalizeDomain(input: string): string | null {
  let d = input.trim().toLowerCase();
  if (d.endsWith('.')) d = d.slice(0, -1);
  if (!d || d.length > 253) return null;
  // domainToASCII returns '' for names it cannot convert.
  const ascii = /^[\x00-\x7f]*$/.test(d) ? d : domainToASCII(d);
  if (!ascii) return null;
  const labels = ascii.split('.');
  // The limit is the name's ASCII form's (RFC 1035: 255 octets on the wire, 253 written out):
  // each non-ASCII label grows by its punycode and `xn--`.
  if (ascii.length > 253 || labels.length < 2 || !labels.every((l) => label.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null;
  return ascii;
}

// RFC 5321 dot-atom local part (quoted local parts are refused: nobody sends from them and
// they are a classic source of header injection). UTF-8 (RFC 6531) without the C1 controls
// (U+0085 is a line break to some readers) and the Unicode line and paragraph separators.
const atext = "A-Za-z0-9!#$%&'*+/=?^_`{|}~\\u00a0-\\u2027\\u202a-\\uffff-";
const localPart = new RegExp(`^[${atext}]+(\\.[${atext}]+)*$`);

export function normalizeEmail(input: string): string | null {
  const text = input.trim();
  if (text.length > 254 || /[\r\n\s<>]/.test(text)) return null;
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1) return null;
  const local = text.slice(0, at);
  if (local.length > 64 || !localPart.test(local)) return null;
  const domain = normalizeDomain(text.slice(at + 1));
  if (!domain) return null;
  // RFC 5321 §4.5.3.1.3: a path holds at most 256 octets with its brackets, so the address
  // 254, in the form stored and sent (ASCII domain; a UTF-8 local part counted in octets).
  const address = `${local}@${domain}`;
  return Buffer.byteLength(address) > 254 ? null : address;
}

export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

/** The sandbox suffix: its names are provisioned with an instance and never relayed. */
export const sandboxSuffix = 'sandbox.test';
export const isSandboxDomain = (domain: string): boolean => domain === sandboxSuffix || domain.endsWith(`.${sandboxSuffix}`);
/** How a sandbox recipient's mail ends (CONTRACT §5: kept, status 3 sent, "captured by the sandbox" in its log). */
export const sandboxCapture = { response: '250 2.0.0 captured by sandbox', detail: 'captured by sandbox' } as const;
