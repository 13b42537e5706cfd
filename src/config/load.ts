/**
 * Configuration: config/default.json < the file named by $ESTAFETA_CONFIG < ESTAFETA_* environment.
 * Declared and validated by schema/config.schema.json; returns a frozen object. Nothing else in
 * the code reads process.env for configuration.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isIP } from 'node:net';
import tls from 'node:tls';
import Ajv from 'ajv';
import { projectRoot, schemaDir } from '../lib/paths';
import { isHostLabel } from '../lib/address';

export interface Config {
  dataDir: string;
  host: string;
  httpPort: number;
  smtpPort: number;
  smtpsPort: number | null;
  mxPort: number;
  hostname: string;
  publicUrl: string;
  dnsServers: string[];
  deliveryPort: number;
  relay: string | null;
  retryDelays: number[];
  maxQueueAge: number;
  tlsCert: string | null;
  tlsKey: string | null;
  smtpAllowInsecureAuth: boolean;
  logLevel: string;
  deliveryConcurrency: number;
  destinationConcurrency: number;
  shutdownTimeout: number;
}

type Kind = 'string' | 'int' | 'intOrOff' | 'list' | 'intList' | 'bool';
/** Environment name → config key and how to parse its text. The README lists the same table. */
export const envKeys: Record<string, [keyof Config, Kind]> = {
  ESTAFETA_DATA_DIR: ['dataDir', 'string'],
  ESTAFETA_HOST: ['host', 'string'],
  ESTAFETA_HTTP_PORT: ['httpPort', 'int'],
  ESTAFETA_SMTP_PORT: ['smtpPort', 'int'],
  ESTAFETA_SMTPS_PORT: ['smtpsPort', 'intOrOff'],
  ESTAFETA_MX_PORT: ['mxPort', 'int'],
  ESTAFETA_HOSTNAME: ['hostname', 'string'],
  ESTAFETA_PUBLIC_URL: ['publicUrl', 'string'],
  ESTAFETA_DNS_SERVERS: ['dnsServers', 'list'],
  ESTAFETA_DELIVERY_PORT: ['deliveryPort', 'int'],
  ESTAFETA_RELAY: ['relay', 'string'],
  ESTAFETA_RETRY_DELAYS: ['retryDelays', 'intList'],
  ESTAFETA_MAX_QUEUE_AGE: ['maxQueueAge', 'int'],
  ESTAFETA_TLS_CERT: ['tlsCert', 'string'],
  ESTAFETA_TLS_KEY: ['tlsKey', 'string'],
  ESTAFETA_SMTP_ALLOW_INSECURE_AUTH: ['smtpAllowInsecureAuth', 'bool'],
  ESTAFETA_LOG_LEVEL: ['logLevel', 'string'],
  ESTAFETA_DELIVERY_CONCURRENCY: ['deliveryConcurrency', 'int'],
  ESTAFETA_DESTINATION_CONCURRENCY: ['destinationConcurrency', 'int'],
  ESTAFETA_SHUTDOWN_TIMEOUT: ['shutdownTimeout', 'int'],
};

export class ConfigError extends Error {}

function parseEnv(name: string, raw: string, kind: Kind): unknown {
  const text = raw.trim();
  const int = (s: string): number => {
    if (!/^-?\d+$/.test(s.trim())) throw new ConfigError(`${name}: "${raw}" is not an integer`);
    return Number(s);
  };
  const off = text === '' || text.toLowerCase() === 'off';
  switch (kind) {
    case 'string': return off ? null : text;
    case 'int': return int(text);
    case 'intOrOff': return off ? null : int(text);
    case 'list': return off ? [] : text.split(',').map((s) => s.trim()).filter(Boolean);
    case 'intList': return text.split(',').map(int);
    case 'bool':
      if (/^(true|1|yes|on)$/i.test(text)) return true;
      if (/^(false|0|no|off|)$/i.test(text)) return false;
      throw new ConfigError(`${name}: "${raw}" is not a boolean`);
  }
}

function readJson(file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`config file ${file}: must be a JSON object of keys`);
  return value as Record<string, unknown>;
}

const isHostName = (name: string): boolean => name.length <= 253 && name.split('.').every(isHostLabel);

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Readonly<Config> {
  return loadConfigSources(env, cwd).config;
}

/**
 * The configuration and the keys the operator set (a value in the environment or the
 * ESTAFETA_CONFIG file; one turned off there counts as not set): the CLI takes the running
 * server's value for a key it was not given (cli/context.ts).
 */
export function loadConfigSources(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): { config: Readonly<Config>; given: ReadonlySet<string> } {
  const merged: Record<string, unknown> = { ...readJson(path.join(projectRoot, 'config', 'default.json')) };
  const given = new Set<string>();
  const set = (key: string, value: unknown): void => {
    merged[key] = value;
    if (value === null || (Array.isArray(value) && value.length === 0)) given.delete(key);
    else given.add(key);
  };
  if (env.ESTAFETA_CONFIG) for (const [key, value] of Object.entries(readJson(path.resolve(cwd, env.ESTAFETA_CONFIG)))) set(key, value);
  for (const [name, [key, kind]] of Object.entries(envKeys)) {
    const raw = env[name];
    if (raw !== undefined) set(key, parseEnv(name, raw, kind));
  }
  const schema = readJson(path.join(schemaDir, 'config.schema.json'));
  const ajv = new Ajv({ useDefaults: true, allErrors: true });
  const validate = ajv.compile(schema);
  if (!validate(merged)) {
    const e = validate.errors?.[0];
    // The failing key by the name the operator wrote: the environment variable (and the file key).
    const unknown = e?.keyword === 'additionalProperties' ? String((e.params as { additionalProperty: string }).additionalProperty) : null;
    const key = unknown ?? (e?.instancePath ?? '').split('/')[1] ?? '';
    const envName = Object.entries(envKeys).find(([, [k]]) => k === key)?.[0];
    const where = key === '' ? '/' : envName ? `${envName} (${key})` : key;
    // A required key set to null was turned off (empty or `off` in the environment): it has no off.
    const why = unknown !== null ? 'unknown key' : merged[key] === null ? 'cannot be empty or off' : e?.message ?? 'invalid';
    throw new ConfigError(`invalid configuration at ${where}: ${why}`);
  }
  const c = merged as unknown as Config;
  // Two listeners on one port would fail halfway through the start, after others were up.
  const ports: [string, number | null][] = [['ESTAFETA_HTTP_PORT', c.httpPort], ['ESTAFETA_SMTP_PORT', c.smtpPort], ['ESTAFETA_SMTPS_PORT', c.smtpsPort], ['ESTAFETA_MX_PORT', c.mxPort]];
  for (const [i, [name, port]] of ports.entries()) {
    const other = ports.slice(0, i).find(([, p]) => port !== null && port !== 0 && p === port);
    if (other) throw new ConfigError(`${name}: port ${port} is also ${other[0]}; each listener needs its own port`);
  }
  // A configured name goes into every EHLO, Message-ID and DNS record the CLI prints: one that is
  // not a host name ("", "bad host!") stops the start here. The OS's own name is taken as it is.
  if (c.hostname !== null && !isHostName(c.hostname)) {
    throw new ConfigError(`ESTAFETA_HOSTNAME (hostname): "${c.hostname}" is not a host name (letters, digits and hyphens in dot-separated labels)`);
  }
  if (c.hostname === null) c.hostname = os.hostname();
  c.hostname = c.hostname.toLowerCase();
  c.dataDir = path.resolve(cwd, c.dataDir);
  if (c.publicUrl === null) c.publicUrl = defaultPublicUrl(c.host, c.httpPort);
  c.publicUrl = c.publicUrl.replace(/\/+$/, '');
  // Both become URLs the service builds on (links in every mail, the smarthost it dials): a
  // value that is not one stops the start here, naming the key, not at the first mail.
  const publicUrl = urlOrNull(c.publicUrl);
  if (!publicUrl || !/^https?:$/.test(publicUrl.protocol) || !publicUrl.hostname || publicUrl.search || publicUrl.hash) {
    throw new ConfigError(`ESTAFETA_PUBLIC_URL: "${c.publicUrl}" is not an http(s) URL (scheme, host, optional port and path)`);
  }
  if (c.relay !== null) {
    const relay = urlOrNull(c.relay);
    if (!relay || !/^smtps?:$/.test(relay.protocol) || !relay.hostname) throw new ConfigError('ESTAFETA_RELAY must be smtp://[user:pass@]host:port');
  }
  for (const server of c.dnsServers) {
    if (!isDnsServer(server)) throw new ConfigError(`ESTAFETA_DNS_SERVERS: "${server}" is not an IP address (IPv4[:port], IPv6 or [IPv6]:port)`);
  }
  // Checked here, before any listener starts, instead of failing the SMTP start halfway.
  if ((c.tlsCert === null) !== (c.tlsKey === null)) throw new ConfigError('ESTAFETA_TLS_CERT and ESTAFETA_TLS_KEY must be set together');
  for (const [name, key] of [['ESTAFETA_TLS_CERT', 'tlsCert'], ['ESTAFETA_TLS_KEY', 'tlsKey']] as const) {
    const file = c[key];
    if (file === null) continue;
    c[key] = path.resolve(cwd, file); // like dataDir: relative to where the service was started
    try {
      fs.accessSync(c[key], fs.constants.R_OK);
    } catch (err) {
      throw new ConfigError(`${name}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (c.tlsCert !== null && c.tlsKey !== null) {
    // The pair as the SMTP listeners will load it: PEM that parses, a key that matches.
    try {
      tls.createSecureContext({ cert: fs.readFileSync(c.tlsCert), key: fs.readFileSync(c.tlsKey) });
    } catch (err) {
      throw new ConfigError(`ESTAFETA_TLS_CERT / ESTAFETA_TLS_KEY: not a usable certificate and key: ${(err as Error).message}`);
    }
  }
  return { config: Object.freeze(c), given };
}

function urlOrNull(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}

/** The forms node:dns setServers takes: an IP, IPv4:port, or [IPv6]:port. */
function isDnsServer(s: string): boolean {
  if (isIP(s)) return true;
  const v6 = /^\[([^\]]+)\]:(\d{1,5})$/.exec(s);
  const v4 = /^([^:]+):(\d{1,5})$/.exec(s);
  const [, ip, port] = v6 ?? v4 ?? [];
  return ip !== undefined && isIP(ip) === (v6 ? 6 : 4) && Number(port) >= 1 && Number(port) <= 65535;
}

/** CONTRACT §2's default public URL: `http://<host>:<http port>`. */
export function defaultPublicUrl(host: string, httpPort: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${httpPort}`;
}
