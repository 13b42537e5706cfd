/** Commands for the catalogs: templates, fields, forms, suppressions (one file per noun). */
import type { Command } from 'commander';
import { templateCommands } from './template';
import { fieldCommands } from './field';
import { formCommands } from './form';
import { suppressionCommands } from './suppression';

export function registerMoreCommands(program: Command): void {
  templateCommands(program);
  fieldCommands(program);
  formCommands(program);
  suppressionCommands(program);
}
