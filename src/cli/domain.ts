/** estafeta domain add | dkim [rotate] | validate | revoke | delete */
import type { Command } from 'commander';
import { run, type CliContext } from './context';
import { addDomain, deleteDomain, presentDomain, requireClientDomain, requireDomainByName, revokeDomain } from '../domains/domains';
import { dkimKeys } from '../store/domains';
import { dkimHost, dkimTarget } from '../domains/dns-records';
import { dkimTxt, rotateDomainKeys } from '../domains/dkim-keys';
import { validateDomain } from '../domains/verify';
import { findInstanceBySlug } from '../store/instances';
import { ServiceError } from '../errors';

function dkimSelectors(ctx: CliContext, slug: string, name: string) {
  const d = requireDomainByName(ctx.db, ctx.instance(slug).id, name);
  const keys = dkimKeys(ctx.db, d.id);
  return {
    domain: d.domain,
    active_selector: keys.find((k) => k.is_active)?.selector ?? 's1',
    selectors: keys.map((k) => ({
      selector: k.selector,
      active: k.is_active === 1,
      cname_host: dkimHost(k.selector, d.domain),
      cname_target: dkimTarget(k.selector, d.ownership_token, ctx.config.hostname),
      txt: dkimTxt(k),
    })),
  };
}

export function domainCommands(program: Command): void {
  const domain = program.command('domain').description('sending domains');

  domain.command('add <slug> <domain>').description('register a domain (all four states pending), or reactivate a deleted one').option('--json')
    .action(run((ctx, [slug, name]) => {
      const i = ctx.instance(slug);
      return presentDomain(addDomain(ctx.db, i.id, name, ctx.now, { maxDomains: i.max_domains, maxSenders: i.max_senders }), ctx.config.hostname);
    }));

  // `domain dkim <slug> <domain>` prints the records; `domain dkim rotate <slug> <domain>` rotates.
  domain.command('dkim <a> <b> [c]').usage('<slug> <domain> | rotate <slug> <domain>')
    .description('print the DKIM TXT records to publish at each CNAME target; "dkim rotate <slug> <domain>" rotates the keys')
    .option('--json')
    .action(run((ctx, [a, b, c]) => {
      if (a === 'rotate' && c === undefined && !findInstanceBySlug(ctx.db, a)) {
        throw new ServiceError('validation_error', "missing required argument 'domain': domain dkim rotate <slug> <domain>", {
          errors: [{ pointer: '/domain', code: 'missing', message: 'Field required' }],
        });
      }
      if (a === 'rotate' && c !== undefined) {
        const d = requireClientDomain(ctx.db, ctx.instance(b).id, c);
        rotateDomainKeys(ctx.db, d.id, ctx.now);
        return dkimSelectors(ctx, b, c);
      }
      return dkimSelectors(ctx, a, b);
    }));

  domain.command('validate <slug> <domain>').description('verify the DNS records now (as POST /v1/domains/{id}/validate)').option('--json')
    .action(run(async (ctx, [slug, name]) => {
      const i = ctx.instance(slug);
      const d = requireDomainByName(ctx.db, i.id, name);
      const after = await validateDomain(ctx.db, i.id, d.id, { hostname: ctx.config.hostname, dnsServers: ctx.config.dnsServers });
      return presentDomain(after, ctx.config.hostname);
    }));

  domain.command('revoke <slug> <domain>').description('administrative revocation: all four states revoked').option('--json')
    .action(run((ctx, [slug, name]) => presentDomain(revokeDomain(ctx.db, ctx.instance(slug).id, name, ctx.now), ctx.config.hostname)));

  domain.command('delete <slug> <domain>').description('delete a domain (re-adding it reactivates it)').option('--json')
    .action(run((ctx, [slug, name]) => {
      deleteDomain(ctx.db, ctx.instance(slug).id, name, ctx.now);
      return { domain: name, deleted: true };
    }));
}
