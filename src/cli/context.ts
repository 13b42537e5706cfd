/**
 * What every CLI command shares: the same configuration and store as the server (safe while it
 * runs: SQLite WAL + busy timeout), and one output contract: with --json exactly one JSON object
 * on stdout, exit 0; on failure {"code","detail"} and a non-zero exit.
 */
import type { Command } from 'commander';
import { ConfigError, loadConfigSources, type Config } from '../config/load';
import { readServerSettings } from '../store/settings';
import { openDb, type Db } from '../store/db';
import { asServiceError, ServiceError } from '../errors';
import { requireInstance } from '../instances/instances';
import type { InstanceRow } from '../store/instances';

export interface CliContext {
  config: Readonly<Config>;
  db: Db;
  now: number;
  instance: (slug: string) => InstanceRow;
}

/** args: the positional arguments; o: the command's options (with the global ones). */
type Action = (ctx: CliContext, args: string[], o: Record<string, unknown>) => unknown;

function print(json: boolean, value: unknown): void {
  if (json) process.stdout.write(`${JSON.stringify(value ?? {})}\n`);
  else process.stdout.write(`${JSON.stringify(value ?? { ok: true }, null, 2)}\n`);
}

/** Wraps a command's action: opens the store, runs, prints, maps errors to {code, detail}. */
export function run(fn: Action) {
  return async (...raw: unknown[]): Promise<void> => {
    const cmd = raw[raw.length - 1] as Command;
    const opts = cmd.optsWithGlobals() as Record<string, unknown>;
    const json = Boolean(opts.json);
    const args = raw.slice(0, -2) as string[];
    let db: Db | undefined;
    try {
      const own = loadConfigSources();
      db = openDb(own.config.dataDir);
      const config = withServerSettings(own.config, own.given, db);
      const handle = db;
      const ctx: CliContext = { config, db: handle, now: Date.now(), instance: (slug) => requireInstance(handle, slug) };
      const result = await fn(ctx, args, opts);
      print(json, result ?? { ok: true });
    } catch (err) {
      if (err instanceof ConfigError) {
        // The operator's configuration, not a fault of the service: named, and EX_CONFIG like `npm start`.
        if (json) process.stdout.write(`${JSON.stringify({ code: 'invalid_configuration', detail: err.message })}\n`);
        else process.stderr.write(`error: invalid_configuration: ${err.message}\n`);
        process.exitCode = 78;
        return;
      }
      const e = err instanceof ServiceError ? err : asServiceError(err);
      const detail = e.code === 'internal_error' ? (err as Error).message : e.detail;
      const body: Record<string, unknown> = { code: e.code, detail, ...e.extras };
      if (json) process.stdout.write(`${JSON.stringify(body)}\n`);
      else process.stderr.write(`error: ${e.code}: ${detail}\n`);
      process.exitCode = e.code === 'internal_error' ? 2 : 1;
    } finally {
      db?.close();
    }
  };
}

/**
 * The CLI's configuration with the running server's host name and resolvers for those it was
 * not given itself (store/settings.ts): a CLI run given only the data dir acts as the server does.
 */
function withServerSettings(config: Readonly<Config>, given: ReadonlySet<string>, db: Db): Readonly<Config> {
  const server = readServerSettings(db);
  return Object.freeze({
    ...config,
    hostname: !given.has('hostname') && server.hostname ? server.hostname : config.hostname,
    dnsServers: !given.has('dnsServers') && server.dnsServers ? server.dnsServers : config.dnsServers,
  });
}

/** Commander option parsers that fail with the spec's validation_error. */
export function intOption(name: string, { allowNone = false, min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  // 'none' travels as the string (commander turns a parser's null into ''); see noneToNull.
  return (value: string): number | 'none' => {
    if (allowNone && value === 'none') return 'none';
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
      throw new ServiceError('validation_error', `--${name} must be an integer ${range}${allowNone ? ' or none' : ''}`, {
        errors: [{ pointer: `/${name.replace(/-/g, '_')}`, code: 'int_parsing', message: `expected an integer ${range}, got ${value}` }],
      });
    }
    return Number(value);
  };
}

/** An option parsed by intOption: 'none' means no limit (null), absent means unchanged. */
export function noneToNull(v: unknown): number | null | undefined {
  if (v === undefined) return undefined;
  return v === 'none' ? null : (v as number);
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export const csv = (value: string): string[] => value.split(',').map((s) => s.trim()).filter(Boolean);
