/**
 * estafeta purpose add | disable | enable, term add, term version add: the consent catalog (CONTRACT §3).
 * Beyond the contract, for what the spec leaves to the dashboard: purpose update (the seeded purposes
 * are "editable"), term update (withdraw a term, change what it covers), term version current.
 */
import type { Command } from 'commander';
import { csv, intOption, run } from './context';
import { validationError } from '../errors';
import { addPurpose, addTerm, addTermVersion, makeVersionCurrent, setPurposeEnabled, updatePurpose, updateTerm } from '../consent/catalog';

export function consentCommands(program: Command): void {
  const purpose = program.command('purpose').description('consent purposes');

  purpose.command('add <slug> <code>').description('create a consent purpose (enabled)')
    .requiredOption('--name <name>').option('--description <text>').option('--json')
    .action(run((ctx, [slug, code], o) => addPurpose(ctx.db, ctx.instance(slug).id,
      { code, name: String(o.name), description: o.description === undefined ? undefined : String(o.description) }, ctx.now)));

  purpose.command('update <slug> <code>').description('rename a purpose or change its description ("" clears it); its code stays')
    .option('--name <name>').option('--description <text>').option('--json')
    .action(run((ctx, [slug, code], o) => updatePurpose(ctx.db, ctx.instance(slug).id, code, {
      name: o.name === undefined ? undefined : String(o.name),
      description: o.description === undefined ? undefined : String(o.description) === '' ? null : String(o.description),
    }, ctx.now)));

  purpose.command('disable <slug> <code>').description('disable a purpose (purposes are never deleted)').option('--json')
    .action(run((ctx, [slug, code]) => setPurposeEnabled(ctx.db, ctx.instance(slug).id, code, false, ctx.now)));

  purpose.command('enable <slug> <code>').description('enable a disabled purpose again').option('--json')
    .action(run((ctx, [slug, code]) => setPurposeEnabled(ctx.db, ctx.instance(slug).id, code, true, ctx.now)));

  const term = program.command('term').description('consent terms and their versions');

  term.command('add <slug>').description('create a consent term (no version yet: publish one with "term version add")')
    .requiredOption('--name <name>').requiredOption('--type <type>', 'data_processing | service_terms | marketing | subscription | other')
    .requiredOption('--purposes <codes>', 'comma list of purpose codes', csv).requiredOption('--channels <channels>', 'comma list of mail, sms, wsp, call, push', csv)
    .option('--inactive', 'the term cannot receive new consents').option('--json')
    .action(run((ctx, [slug], o) => {
      const i = ctx.instance(slug);
      return ctx.db.transaction(() => addTerm(ctx.db, i.id, {
        name: String(o.name), type: String(o.type), purposeCodes: o.purposes as string[], channels: o.channels as string[], isActive: !o.inactive,
      }, ctx.now)).immediate();
    }));

  term.command('update <slug> <term_id>').description('change a term (unnamed fields stay); --inactive withdraws it from new consents')
    .option('--name <name>').option('--type <type>', 'data_processing | service_terms | marketing | subscription | other')
    .option('--purposes <codes>', 'comma list of purpose codes (replaces the list)', csv).option('--channels <channels>', 'comma list of mail, sms, wsp, call, push (replaces the list)', csv)
    .option('--active', 'the term receives new consents again').option('--inactive', 'the term cannot receive new consents').option('--json')
    .action(run((ctx, [slug, termId], o) => {
      const i = ctx.instance(slug);
      const id = Number(intOption('term_id', { min: 1 })(termId));
      if (o.active && o.inactive) throw validationError([{ pointer: '/is_active', code: 'value_error', message: 'Give --active or --inactive, not both.' }], 'Give --active or --inactive, not both.');
      return ctx.db.transaction(() => updateTerm(ctx.db, i.id, id, {
        name: o.name === undefined ? undefined : String(o.name),
        type: o.type === undefined ? undefined : String(o.type),
        purposeCodes: o.purposes as string[] | undefined,
        channels: o.channels as string[] | undefined,
        isActive: o.active ? true : o.inactive ? false : undefined,
      }, ctx.now)).immediate();
    }));

  const version = term.command('version').description('versions of a term');
  version.command('add <slug> <term_id>').description('publish a version of the legal text (--current: it becomes the only current one)')
    .requiredOption('--version <label>').requiredOption('--body <text>').option('--document-url <url>').option('--current').option('--json')
    .action(run((ctx, [slug, termId], o) => {
      const i = ctx.instance(slug);
      const id = Number(intOption('term_id', { min: 1 })(termId));
      return ctx.db.transaction(() => addTermVersion(ctx.db, i.id, id, {
        version: String(o.version), body: String(o.body), documentUrl: o.documentUrl === undefined ? undefined : String(o.documentUrl), current: Boolean(o.current),
      }, ctx.now)).immediate();
    }));
  version.command('current <slug> <term_id> <version>').description('make a published version (by its label) the only current one').option('--json')
    .action(run((ctx, [slug, termId, label]) => {
      const i = ctx.instance(slug);
      const id = Number(intOption('term_id', { min: 1 })(termId));
      return ctx.db.transaction(() => makeVersionCurrent(ctx.db, i.id, id, label, ctx.now)).immediate();
    }));
}
