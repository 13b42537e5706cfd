/** estafeta purpose add | disable | enable, term add, term version add: the consent catalog (CONTRACT §3). */
import type { Command } from 'commander';
import { csv, intOption, run } from './context';
import { addPurpose, addTerm, addTermVersion, setPurposeEnabled } from '../consent/catalog';

export function consentCommands(program: Command): void {
  const purpose = program.command('purpose').description('consent purposes');

  purpose.command('add <slug> <code>').description('create a consent purpose (enabled)')
    .requiredOption('--name <name>').option('--description <text>').option('--json')
    .action(run((ctx, [slug, code], o) => addPurpose(ctx.db, ctx.instance(slug).id,
      { code, name: String(o.name), description: o.description === undefined ? undefined : String(o.description) }, ctx.now)));

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
}
