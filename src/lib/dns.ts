/**
 * DNS lookups through ESTAFETA_DNS_SERVERS (empty: the system resolvers), with one distinction
 * the callers need: "no such record" (NXDOMAIN, NODATA) is an answer and comes back as null,
 * while a resolver that does not answer (timeout, SERVFAIL, refused) throws DnsUnavailableError.
 */
import { promises as dnsPromises } from 'node:dns';

/** c-ares codes that mean the name or the type does not exist: a verdict, not an outage. */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA']);

export class DnsUnavailableError extends Error {
  constructor(readonly lookupName: string, readonly rrtype: string, readonly reason: string) {
    super(`DNS lookup of ${lookupName} (${rrtype}) got no answer: ${reason}`);
    this.name = 'DnsUnavailableError';
  }
}

export interface MxRecord { exchange: string; priority: number }

export interface DnsClient {
  /** TXT records, each with its character-strings joined; null when none exist. */
  txt(name: string): Promise<string[] | null>;
  mx(name: string): Promise<MxRecord[] | null>;
  /** The CNAME target (lowercase, no trailing dot); null when the name has no CNAME. */
  cname(name: string): Promise<string | null>;
  /** Abandons queries still in flight (after the first failure there is no use waiting). */
  cancel(): void;
}

export interface DnsOptions { timeoutMs?: number; tries?: number }

export const normalizeName = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/**
 * A fresh resolver (its own channel, so no answer cached from an earlier call leaks into a new
 * verification). Short timeout and two tries: validate is interactive and repeatable.
 */
export function createDnsClient(servers: readonly string[], opts: DnsOptions = {}): DnsClient {
  const resolver = new dnsPromises.Resolver({ timeout: opts.timeoutMs ?? 1000, tries: opts.tries ?? 2 });
  if (servers.length) resolver.setServers([...servers]);

  async function query<T>(name: string, rrtype: string, fn: () => Promise<T>): Promise<T | null> {
    try {
      return await fn();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      if (NO_RECORD.has(code)) return null;
      throw new DnsUnavailableError(name, rrtype, code);
    }
  }

  return {
    txt: async (name) => {
      const r = await query(name, 'TXT', () => resolver.resolveTxt(name));
      return r === null || r.length === 0 ? null : r.map((chunks) => chunks.join(''));
    },
    mx: async (name) => {
      const r = await query(name, 'MX', () => resolver.resolveMx(name));
      return r === null || r.length === 0 ? null : r.map((m) => ({ exchange: normalizeName(m.exchange), priority: m.priority }));
    },
    cname: async (name) => {
      const r = await query(name, 'CNAME', () => resolver.resolveCname(name));
      return r === null || r.length === 0 ? null : normalizeName(r[0]);
    },
    cancel: () => resolver.cancel(),
  };
}
