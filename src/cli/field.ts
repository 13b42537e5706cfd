/** estafeta field add | disable | enable: the field catalog (the API only reads it). */
import type { Command } from 'commander';
import { run } from './context';
import { addField, presentField, setFieldActive } from '../fields/fields';

export function fieldCommands(program: Command): void {
  const field = program.command('field').description('the field catalog');

  field.command('add <slug>').description('add a field; the key is canonicalized to UPPER_CASE with underscores')
    .requiredOption('--name <name>').requiredOption('--key <key>').requiredOption('--type <type>', 'email | phone | text | textarea | number | date | select | boolean | url | address')
    .option('--config <json>', 'type-specific configuration: a JSON object').option('--inactive', 'create it inactive').option('--json')
    .action(run((ctx, [slug], o) => presentField(addField(ctx.db, ctx.instance(slug).id, {
      name: String(o.name), key: String(o.key), type: String(o.type), isActive: !o.inactive, config: o.config === undefined ? undefined : String(o.config),
    }, ctx.now))));

  for (const [verb, active] of [['disable', false], ['enable', true]] as const) {
    field.command(`${verb} <slug> <key>`).description(`${verb} a field (an inactive field cannot be attached to new forms)`).option('--json')
      .action(run((ctx, [slug, key]) => presentField(setFieldActive(ctx.db, ctx.instance(slug).id, key, active, ctx.now))));
  }
}
