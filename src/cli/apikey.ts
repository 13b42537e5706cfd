/** estafeta apikey create | revoke */
import type { Command } from 'commander';
import { csv, run } from './context';
import { createApiKey, revokeKey } from '../auth/api-keys';

export function apikeyCommands(program: Command): void {
  const apikey = program.command('apikey').description('API keys: create (shown once), revoke');

  const create = apikey.command('create <slug>').description('create an API key; the token is printed once and stored only as a hash')
    .option('--name <name>').option('--scopes <scopes>', 'all, or a comma list of scopes', 'all').option('--ip-allow <cidrs>', 'comma list of CIDR ranges')
    .option('--json');
  create.action(run((ctx, [slug], o) => {
    const raw = String(o.scopes);
    const scopes = raw.trim() === 'all' ? 'all' : csv(raw);
    return createApiKey(ctx.db, ctx.instance(slug), { name: o.name as string | undefined, scopes, ipAllow: o.ipAllow ? csv(String(o.ipAllow)) : [] }, ctx.now);
  }));

  apikey.command('revoke <slug> <key_id>').description('revoke an API key: it gets 401 from the next request').option('--json')
    .action(run((ctx, [slug, keyId]) => {
      const i = ctx.instance(slug);
      revokeKey(ctx.db, i.id, keyId, ctx.now);
      return { key_id: keyId, revoked: true };
    }));
}
