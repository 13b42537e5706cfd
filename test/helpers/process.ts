/**
 * Runs the service as its own process (`node dist/src/main.js`, what `npm start` runs after the
 * build) and reads the listeners' addresses from their ready log lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export interface ServiceProcess {
  child: ChildProcess;
  /** listener name → "host:port" from its ready line */
  addresses: Record<string, string>;
  lines: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const mainJs = path.join(__dirname, '..', '..', 'src', 'main.js');

/** `command` runs something else than `node dist/src/main.js` (`npm start` from the project root). */
export function spawnService(t: { teardown(fn: () => unknown): void }, env: Record<string, string>, expect: string[] = ['http'],
  command: { file: string; args: string[]; cwd?: string } = { file: process.execPath, args: [mainJs] }): Promise<ServiceProcess> {
  const child = spawn(command.file, command.args, {
    cwd: command.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ESTAFETA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited;
  });
  const addresses: Record<string, string> = {};
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.on('line', (line) => {
      try {
        const rec = JSON.parse(line) as Record<string, unknown>;
        lines.push(rec);
        if (rec.event === 'listener.ready') addresses[String(rec.listener)] = String(rec.address);
        if (expect.every((l) => addresses[l])) resolve({ child, addresses, lines, exited });
      } catch {
        // not a log line
      }
    });
    // 'close', not 'exit': at 'exit' the child's stderr may still be unread (Node's docs), and
    // the tests match what the service said before it stopped.
    child.once('close', (code) => reject(new Error(`service exited with ${code} before ready: ${stderr}`)));
  });
}
