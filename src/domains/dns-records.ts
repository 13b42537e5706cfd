/**
 * The exact DNS records a customer publishes for a sending domain, computed from the domain and
 * the platform's host name (ESTAFETA_HOSTNAME) on every response, never stored.
 *
 *  ownership  CNAME <token>.<domain>          → verify.<hostname>
 *  mx         MX    <domain>                  → <hostname> (priority 10: bounces reach our inbound MX)
 *  spf        TXT   <domain>                  → v=spf1 include:_spf.<hostname> ~all
 *  dkim       CNAME s1._domainkey.<domain>    → s1.<token>.dkim.<hostname>   (and s2 alike)
 *  dmarc      TXT   _dmarc.<domain>           → v=DMARC1; p=none; rua=mailto:dmarc@<hostname>
 *
 * The operator publishes, once per domain, the DKIM TXT at each CNAME target (estafeta domain
 * dkim prints them), and once for the platform the _spf.<hostname> TXT listing its addresses.
 */
export interface DnsRecord { type: 'CNAME' | 'MX' | 'TXT'; host: string; value: string; priority: number | null }
export interface DnsRecords { ownership_cname: DnsRecord; mx: DnsRecord; spf: DnsRecord; dkim: [DnsRecord, DnsRecord]; dmarc: DnsRecord }

export const spfInclude = (hostname: string): string => `_spf.${hostname}`;
export const dkimTarget = (selector: 's1' | 's2', token: string, hostname: string): string => `${selector}.${token}.dkim.${hostname}`;
export const dkimHost = (selector: 's1' | 's2', domain: string): string => `${selector}._domainkey.${domain}`;

export function dnsRecords(d: { domain: string; ownership_token: string }, hostname: string): DnsRecords {
  const cname = (host: string, value: string): DnsRecord => ({ type: 'CNAME', host, value, priority: null });
  return {
    ownership_cname: cname(`${d.ownership_token}.${d.domain}`, `verify.${hostname}`),
    mx: { type: 'MX', host: d.domain, value: hostname, priority: 10 },
    spf: { type: 'TXT', host: d.domain, value: `v=spf1 include:${spfInclude(hostname)} ~all`, priority: null },
    dkim: [
      cname(dkimHost('s1', d.domain), dkimTarget('s1', d.ownership_token, hostname)),
      cname(dkimHost('s2', d.domain), dkimTarget('s2', d.ownership_token, hostname)),
    ],
    dmarc: { type: 'TXT', host: `_dmarc.${d.domain}`, value: `v=DMARC1; p=none; rua=mailto:dmarc@${hostname}`, priority: null },
  };
}
