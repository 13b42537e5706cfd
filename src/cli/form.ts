/** estafeta form add: forms and their items (the API only reads them). */
import type { Command } from 'commander';
import { collect, intOption, run } from './context';
import { addForm } from '../forms/forms';

export function formCommands(program: Command): void {
  const form = program.command('form').description('forms');

  form.command('add <slug>').description('create a form; items are the --field options in order, then the --term options')
    .requiredOption('--name <name>').requiredOption('--kind <kind>', 'consent | advanced').requiredOption('--type <type>', 'acquisition | update')
    .option('--field <KEY[:required]>', 'a catalog field item, repeatable', collect, [])
    .option('--term <term_id>', 'a consent item for this consent term, repeatable', (v: string, prev: number[] = []) => [...prev, intOption('term', { min: 1 })(v) as number], [])
    .option('--settings <json>', 'public texts (title, header_text, footer_text): a JSON object')
    .option('--default', 'mark it as the default form').option('--inactive', 'create it inactive').option('--json')
    .action(run((ctx, [slug], o) => addForm(ctx.db, ctx.instance(slug).id, {
      name: String(o.name), kind: String(o.kind), type: String(o.type),
      fields: o.field as string[], terms: o.term as number[],
      settings: o.settings === undefined ? undefined : String(o.settings),
      isDefault: Boolean(o.default), isActive: !o.inactive,
    }, ctx.now)));
}
