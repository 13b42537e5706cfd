/** estafeta sender add | consent */
import type { Command } from 'commander';
import { collect, run, type CliContext } from './context';
import { addSender, presentSender, requireSenderByEmail } from '../senders/senders';
import { setSenderPurposes } from '../store/senders';
import { ServiceError } from '../errors';

/** --consent CODE:MODE, repeatable → purpose ids of the instance with their mode. */
function parseConsent(ctx: CliContext, instanceId: number, items: string[]): { purposeId: number; mode: 'opt_in' | 'opt_out' }[] {
  const seen = new Set<number>();
  return items.map((item, index) => {
    const m = /^([^:]+):(opt_in|opt_out)$/.exec(item.trim());
    if (!m) {
      throw new ServiceError('validation_error', `--consent must be PURPOSE_CODE:opt_in or PURPOSE_CODE:opt_out, got ${item}`, {
        errors: [{ pointer: `/consent/${index}`, code: 'value_error', message: 'expected PURPOSE_CODE:opt_in|opt_out' }],
      });
    }
    const purpose = ctx.db.prepare('SELECT id FROM consent_purposes WHERE instance_id = ? AND code = ?').get(instanceId, m[1]) as { id: number } | undefined;
    if (!purpose) throw new ServiceError('consent_purpose_not_found', `Purpose ${m[1]} does not exist.`);
    if (seen.has(purpose.id)) throw new ServiceError('validation_error', `Purpose ${m[1]} is declared twice.`, { errors: [{ pointer: `/consent/${index}`, code: 'value_error.duplicate', message: 'purpose declared twice' }] });
    seen.add(purpose.id);
    return { purposeId: purpose.id, mode: m[2] as 'opt_in' | 'opt_out' };
  });
}

/** The Sender exactly as the API shows it (CONTRACT §3); `is_consent_required` reflects --consent. */
function present(ctx: CliContext, instanceId: number, email: string) {
  return presentSender(requireSenderByEmail(ctx.db, instanceId, email));
}

export function senderCommands(program: Command): void {
  const sender = program.command('sender').description('senders');

  sender.command('add <slug> <email>').description('create a sender on a verified domain')
    .option('--name <name>').option('--consent <code:mode>', 'declared purpose and mode (opt_in | opt_out), repeatable', collect, []).option('--json')
    .action(run((ctx, [slug, email], o) => {
      const i = ctx.instance(slug);
      return ctx.db.transaction(() => {
        const purposes = parseConsent(ctx, i.id, o.consent as string[]);
        const s = addSender(ctx.db, i.id, { email, name: o.name as string | undefined }, ctx.now, i.max_senders);
        if (purposes.length) setSenderPurposes(ctx.db, i.id, s.id, purposes, ctx.now);
        return present(ctx, i.id, s.email_address);
      }).immediate();
    }));

  sender.command('consent <slug> <email>').description("replace the sender's declared purposes (--none: consent no longer required)")
    .option('--consent <code:mode>', 'declared purpose and mode, repeatable', collect, []).option('--none', 'declare no purpose').option('--json')
    .action(run((ctx, [slug, email], o) => {
      const i = ctx.instance(slug);
      const s = requireSenderByEmail(ctx.db, i.id, email);
      if (o.none && (o.consent as string[]).length > 0) {
        throw new ServiceError('validation_error', '--none and --consent contradict each other: give one.', { errors: [{ pointer: '/consent', code: 'value_error', message: '--none declares no purpose' }] });
      }
      const purposes = o.none ? [] : parseConsent(ctx, i.id, o.consent as string[]);
      if (!o.none && purposes.length === 0) {
        throw new ServiceError('validation_error', 'Give at least one --consent CODE:MODE, or --none.', { errors: [{ pointer: '/consent', code: 'missing', message: 'Field required' }] });
      }
      ctx.db.transaction(() => setSenderPurposes(ctx.db, i.id, s.id, purposes, ctx.now))();
      return present(ctx, i.id, s.email_address);
    }));
}
