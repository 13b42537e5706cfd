/** estafeta instance create | disable | enable | limits */
import type { Command } from 'commander';
import { csv, intOption, noneToNull, run } from './context';
import { createInstance, presentInstance, presentLimits, updateLimits, type LimitsInput } from '../instances/instances';
import { setInstanceActive } from '../store/instances';
import { ServiceError } from '../errors';

export function instanceCommands(program: Command): void {
  const instance = program.command('instance').description('tenants: create, disable, enable, limits');

  instance.command('create <slug>').description('create an instance with its sandbox domain, sender, purposes and system fields')
    .option('--name <name>').option('--timezone <zone>', 'IANA time zone', 'UTC').option('--json')
    .action(run((ctx, [slug], o) => {
      return presentInstance(createInstance(ctx.db, { slug, name: o.name as string | undefined, timezone: o.timezone as string }, ctx.now));
    }));

  for (const [name, active] of [['disable', false], ['enable', true]] as const) {
    instance.command(`${name} <slug>`).description(`${name} an instance (API keys of a disabled instance get 403)`).option('--json')
      .action(run((ctx, [slug]) => {
        const i = ctx.instance(slug);
        setInstanceActive(ctx.db, i.id, active, ctx.now);
        return presentInstance(ctx.instance(slug));
      }));
  }

  const limits = instance.command('limits <slug>').description('show or change the limits of an instance')
    .option('--send-limit <n>', 'sends per cycle, or none', intOption('send-limit', { allowNone: true }))
    .option('--send-cycle-days <d>', 'length of a send cycle in days', intOption('send-cycle-days', { min: 1, max: 36_500 }))
    .option('--max-domains <n>', 'active custom domains, or none', intOption('max-domains', { allowNone: true }))
    .option('--max-senders <n>', 'active senders, or none', intOption('max-senders', { allowNone: true }))
    .option('--attachment-max-bytes <n>', 'functional attachment limit', intOption('attachment-max-bytes'))
    .option('--bandwidth-bytes-per-second <n>', 'bandwidth refill rate, or none', intOption('bandwidth-bytes-per-second', { allowNone: true, min: 1 }))
    .option('--bandwidth-burst-bytes <n>', 'bandwidth bucket capacity, or none', intOption('bandwidth-burst-bytes', { allowNone: true, min: 1 }))
    .option('--ip-allow <cidrs>', 'comma list of CIDR ranges, or none')
    .option('--subscription <state>', 'active | inactive')
    .option('--scoped-keys <state>', 'allowed | unavailable (plan API access control)')
    .option('--json');
  limits.action(run((ctx, [slug], o) => {
    const i = ctx.instance(slug);
    const input: LimitsInput = {
      sendLimit: noneToNull(o.sendLimit),
      sendCycleDays: o.sendCycleDays as number | undefined,
      maxDomains: noneToNull(o.maxDomains),
      maxSenders: noneToNull(o.maxSenders),
      attachmentMaxBytes: o.attachmentMaxBytes as number | undefined,
      bandwidthBytesPerSecond: noneToNull(o.bandwidthBytesPerSecond),
      bandwidthBurstBytes: noneToNull(o.bandwidthBurstBytes),
    };
    if (typeof o.ipAllow === 'string') input.ipAllow = o.ipAllow === 'none' ? [] : csv(o.ipAllow);
    if (o.subscription !== undefined) {
      if (o.subscription !== 'active' && o.subscription !== 'inactive') throw enumError('subscription', 'active, inactive');
      input.subscription = o.subscription;
    }
    if (o.scopedKeys !== undefined) {
      if (o.scopedKeys !== 'allowed' && o.scopedKeys !== 'unavailable') throw enumError('scoped_keys', 'allowed, unavailable');
      input.scopedKeys = o.scopedKeys;
    }
    return presentLimits(updateLimits(ctx.db, i.id, input, ctx.now));
  }));
}

export function enumError(field: string, expected: string): ServiceError {
  return new ServiceError('validation_error', `--${field.replace(/_/g, '-')} must be one of ${expected}`, {
    errors: [{ pointer: `/${field}`, code: 'enum', message: `Input should be one of ${expected}`, params: { expected } }],
  });
}
