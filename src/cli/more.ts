/** Commands for the catalogs: templates, purposes, terms, fields, forms, suppressions. */
import type { Command } from 'commander';

export function registerMoreCommands(program: Command): void {
  void program;
}
