/** estafeta template add | update | delete: mail templates (the API only reads them). */
import fs from 'node:fs';
import type { Command } from 'commander';
import { run } from './context';
import { ServiceError } from '../errors';
import { addTemplate, deleteTemplate, presentTemplate, updateTemplate, type TemplateInput } from '../templates/templates';

function readFile(file: unknown, pointer: string): string | undefined {
  if (file === undefined) return undefined;
  try {
    return fs.readFileSync(String(file), 'utf8');
  } catch (err) {
    throw new ServiceError('validation_error', `Cannot read ${String(file)}: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`, {
      errors: [{ pointer, code: 'value_error.file', message: `cannot read ${String(file)}` }],
    });
  }
}

const str = (v: unknown): string | undefined => (v === undefined ? undefined : String(v));

function input(o: Record<string, unknown>): TemplateInput {
  return {
    name: str(o.name),
    subject: str(o.subject),
    status: str(o.status),
    description: str(o.description),
    provider: str(o.provider),
    html: readFile(o.htmlFile, '/html'),
    text: readFile(o.textFile, '/text'),
    config: readFile(o.configFile, '/config'),
  };
}

function templateId(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw new ServiceError('validation_error', 'The template id must be a positive integer.', { errors: [{ pointer: '/id', code: 'int_parsing', message: 'Input should be a valid integer' }] });
  return Number(raw);
}

function contentOptions(cmd: Command): Command {
  return cmd.option('--name <name>').option('--subject <subject>', "subject ('' clears it)").option('--html-file <file>', 'HTML body')
    .option('--text-file <file>', 'plain-text body').option('--status <status>', 'draft | public').option('--provider <provider>', 'bee | ckeditor')
    .option('--description <text>', "('' clears it)").option('--config-file <file>', 'editor configuration: a JSON object').option('--json');
}

export function templateCommands(program: Command): void {
  const template = program.command('template').description('mail templates');

  contentOptions(template.command('add <slug>').description('create a template (draft unless --status public); prints it with its id'))
    .action(run((ctx, [slug], o) => presentTemplate(addTemplate(ctx.db, ctx.instance(slug).id, input(o), ctx.now))));

  contentOptions(template.command('update <slug> <id>').description('change the given attributes of a template; the API sees it on the next request'))
    .action(run((ctx, [slug, id], o) => presentTemplate(updateTemplate(ctx.db, ctx.instance(slug).id, templateId(id), input(o), ctx.now))));

  template.command('delete <slug> <id>').description('delete a template: it disappears from the API and can no longer be sent').option('--json')
    .action(run((ctx, [slug, id]) => {
      const tid = templateId(id);
      deleteTemplate(ctx.db, ctx.instance(slug).id, tid, ctx.now);
      return { id: tid, deleted: true };
    }));
}
