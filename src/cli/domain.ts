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
  domain.command('dkim [words...]').usage('<slug> <domain> | rotate <slug> <domain>')
    .description('print the DKIM TXT records to publish at each CNAME target; "dkim rotate <slug> <domain>" rotates the keys')
    .option('--json')
    .action(run((ctx, [words]) => {
      const args = words as unknown as string[];
      // An instance may be named "rotate": then two words are <slug> <domain>.
      const rotate = args[0] === 'rotate' && (args.length !== 2 || !findInstanceBySlug(ctx.db, 'rotate'));
      const [slug, name, ...extra] = rotate ? args.slice(1) : args;
      const usage = rotate ? 'domain dkim rotate <slug> <domain>' : 'domain dkim <slug> <domain>';
      const missing = slug === undefined ? 'slug' : name === undefined ? 'domain' : null;
      if (missing) {
        throw new ServiceError('validation_error', `missing required argument '${missing}': ${usage}`, {
          errors: [{ pointer: `/${missing}`, code: 'missing', message: 'Field required' }],
        });
      }
      if (extra.length > 0) throw new ServiceError('validation_error', `too many arguments: ${usage}`);
      if (rotate) rotateDomainKeys(ctx.db, requireClientDomain(ctx.db, ctx.instance(slug).id, name).id, ctx.now);
      return dkimSelectors(ctx, slug, name);
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
