/** IP allow lists (CIDR, IPv4 and IPv6) with ipaddr.js; an empty list allows everyone. */
import ipaddr from 'ipaddr.js';
import { ServiceError } from '../errors';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * An IPv4-mapped IPv6 range (::ffff:10.0.0.0/104) is the IPv4 range it maps (10.0.0.0/8):
 * clients are matched as IPv4 (ipAllowed), so the entry must be one too.
 */
function canonicalRange([addr, bits]: Range): Range {
  if (addr.kind() === 'ipv6' && bits >= 96 && (addr as ipaddr.IPv6).isIPv4MappedAddress()) return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
  return [addr, bits];
}

/** Validates and canonicalizes CIDR texts; a bare address means that one host. */
export function parseCidrList(items: string[], pointer: string): string[] {
  return items.map((raw, i) => {
    const text = raw.trim();
    try {
      // ipaddr.js also parses the old inet_aton forms ("10.1" = 10.0.0.1, "1" = 0.0.0.1), which
      // in an allow list are typos far more often than intent: an IPv4 address is four decimals.
      const host = text.split('/')[0];
      if (!ipaddr.IPv4.isValidFourPartDecimal(host) && !ipaddr.IPv6.isValid(host)) throw new Error('not an address');
      const parsed = ipaddr.parse(host);
      const [addr, bits] = canonicalRange(text.includes('/') ? ipaddr.parseCIDR(text) : [parsed, parsed.kind() === 'ipv4' ? 32 : 128]);
      return `${addr.toString()}/${bits}`;
    } catch {
      throw new ServiceError('validation_error', `Invalid CIDR: ${text}`, {
        errors: [{ pointer: `${pointer}/${i}`, code: 'value_error.cidr', message: `${text} is not an IPv4 or IPv6 address or CIDR range` }],
      });
    }
  });
}

/** IPv4-mapped IPv6 (::ffff:1.2.3.4, as Node reports IPv4 clients on dual-stack sockets) is matched as IPv4. */
export function ipAllowed(remote: string, cidrs: string[]): boolean {
  if (cidrs.length === 0) return true;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(remote);
  } catch {
    return false;
  }
  return cidrs.some((cidr) => {
    try {
      const [range, bits] = canonicalRange(ipaddr.parseCIDR(cidr));
      if (range.kind() !== addr.kind()) return false;
      return addr.match([range, bits] as [ipaddr.IPv4 | ipaddr.IPv6, number]);
    } catch {
      return false;
    }
  });
}
