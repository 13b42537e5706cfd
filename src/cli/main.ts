/** `npx estafeta <noun> <verb>`: the admin CLI (the spec's "dashboard"), CONTRACT §3. */
import { Command, CommanderError } from 'commander';
import { ServiceError } from '../errors';
import { instanceCommands } from './instance';
import { apikeyCommands } from './apikey';
import { domainCommands } from './domain';
import { senderCommands } from './sender';
import { consentCommands } from './consent';
import { registerMoreCommands } from './more';

export function buildProgram(output?: { writeOut: (s: string) => void; writeErr: (s: string) => void }): Command {
  const program = new Command('estafeta')
    .description('Estafeta admin CLI: uses the same configuration and data dir as the server')
    .option('--json', 'print exactly one JSON object on stdout')
    .exitOverride();
  if (output) program.configureOutput(output); // before the commands: they inherit it
  instanceCommands(program);
  apikeyCommands(program);
  domainCommands(program);
  senderCommands(program);
  consentCommands(program);
  registerMoreCommands(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const json = argv.includes('--json');
  // With --json, stdout carries one JSON object whatever happens: commander's help text becomes
  // {"help": ...}, and its usage messages the error object's detail.
  let help = '';
  const program = buildProgram(json ? { writeOut: (text) => { help += text; }, writeErr: () => undefined } : undefined);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // Option parsers throw ServiceError (validation_error); commander throws usage errors.
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) {
        if (json) process.stdout.write(`${JSON.stringify({ help })}\n`);
        return;
      }
      // A group without its verb ('estafeta template') makes commander print help and say '(outputHelp)'.
      const detail = err.message === '(outputHelp)' ? 'A command is required; see --help.' : err.message.replace(/^error: /, '');
      if (json) process.stdout.write(`${JSON.stringify({ code: 'validation_error', detail })}\n`);
      process.exitCode = err.exitCode || 1;
      return;
    }
    const e = err instanceof ServiceError ? err : new ServiceError('internal_error', (err as Error).message);
    if (json) process.stdout.write(`${JSON.stringify({ code: e.code, detail: e.detail, ...e.extras })}\n`);
    else process.stderr.write(`error: ${e.code}: ${e.detail}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main(process.argv);
