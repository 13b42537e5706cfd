/** estafeta suppression add | remove: the three suppression lists (restrictions, unsubscribes, complaints). */
import type { Command } from 'commander';
import { run } from './context';
import { addManualSuppression, parseList, removeManualSuppression } from '../suppressions/suppressions';

export function suppressionCommands(program: Command): void {
  const suppression = program.command('suppression').description('suppression lists');

  suppression.command('add <slug> <email>').description('put an address on a list (idempotent: an existing record is kept)')
    .option('--list <list>', 'restrictions | unsubscribes | complaints').option('--reason <text>').option('--json')
    .action(run((ctx, [slug, email], o) => {
      const list = parseList(o.list === undefined ? undefined : String(o.list));
      const record = addManualSuppression(ctx.db, ctx.instance(slug).id, { list, recipient: email, reason: o.reason === undefined ? undefined : String(o.reason) }, ctx.now);
      return record; // the record as GET /v1/mail-<list>/{id} shows it (CONTRACT §3)
    }));

  suppression.command('remove <slug> <email>').description('take an address off a list; sends to it are accepted again')
    .option('--list <list>', 'restrictions | unsubscribes | complaints').option('--json')
    .action(run((ctx, [slug, email], o) => {
      const list = parseList(o.list === undefined ? undefined : String(o.list));
      return removeManualSuppression(ctx.db, ctx.instance(slug).id, list, email); // the record removed
    }));
}
