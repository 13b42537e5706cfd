/**
 * Starts the real service in-process on loopback port 0 with a fresh data dir, plus thin clients
 * for its doors: `api()` (real HTTP via fetch) and `cli()` (the real CLI, spawned as
 * `npx estafeta` would run it). Everything started is closed in t.teardown.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load';
import { createLogger } from '../../src/lib/log';
import { startService, type RunningService } from '../../src/service';

export interface TapLike { teardown: (fn: () => unknown) => void }

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CliResult<T = any> { code: number; json: T; stdout: string; stderr: string }

export interface TestService {
  svc: RunningService;
  url: string;
  dataDir: string;
  env: Record<string, string>;
  api: <T = any>(method: string, urlPath: string, opts?: { body?: unknown; headers?: Record<string, string>; key?: string | null; slug?: string | null; raw?: string | Buffer }) => Promise<ApiResponse<T>>;
  cli: <T = any>(...args: string[]) => Promise<CliResult<T>>;
  /** Creates an instance and an `all` key; api() then uses them by default. */
  tenant: (slug?: string, keyArgs?: string[]) => Promise<{ slug: string; key: string; instance: any }>;
  stop: () => Promise<void>;
}

// Every data dir a test file made goes when its process ends: tests reopen them across restarts
// (so a teardown per service would be too early), and CI machines run the suite many times.
const madeDirs: string[] = [];
process.on('exit', () => {
  for (const dir of madeDirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // a child still writing into it: left to the OS's temp cleanup
    }
  }
});

export function tempDir(prefix = 'estafeta-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}

let slugCounter = 0;
const cliMain = path.join(__dirname, '..', '..', 'src', 'cli', 'main.js');

export async function startTestService(t: TapLike, env: Record<string, string> = {}): Promise<TestService> {
  const dataDir = env.ESTAFETA_DATA_DIR ?? tempDir();
  const fullEnv: Record<string, string> = {
    ESTAFETA_DATA_DIR: dataDir,
    ESTAFETA_HOST: '127.0.0.1',
    ESTAFETA_HTTP_PORT: '0',
    ESTAFETA_SMTP_PORT: '0',
    ESTAFETA_MX_PORT: '0',
    ESTAFETA_HOSTNAME: 'mta.estafeta.test',
    ESTAFETA_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ESTAFETA_DNS_SERVERS: '127.0.0.1:9',
    ...env,
  };
  const config = loadConfig(fullEnv as NodeJS.ProcessEnv);
  const svc = await startService(config, createLogger(config.logLevel));
  const url = `http://127.0.0.1:${svc.ports.http}`;
  let defaults: { key: string | null; slug: string | null } = { key: null, slug: null };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await svc.stop();
  };
  t.teardown(stop);

  const api: TestService['api'] = async (method, urlPath, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const key = opts.key === undefined ? defaults.key : opts.key;
    const slug = opts.slug === undefined ? defaults.slug : opts.slug;
    if (key !== null) headers.Authorization ??= `Bearer ${key}`;
    if (slug !== null) headers['X-Instance-Slug'] ??= slug;
    let body: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(url + urlPath, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  };

  const cli: TestService['cli'] = (...args) => runCli(fullEnv, args);

  const tenant: TestService['tenant'] = async (slug = `t${process.pid}x${++slugCounter}`, keyArgs = []) => {
    const inst = await cli('instance', 'create', slug, '--json');
    if (inst.code !== 0) throw new Error(`instance create failed: ${inst.stdout} ${inst.stderr}`);
    const k = await cli('apikey', 'create', slug, ...keyArgs, '--json');
    if (k.code !== 0) throw new Error(`apikey create failed: ${k.stdout} ${k.stderr}`);
    defaults = { key: k.json.api_key, slug };
    return { slug, key: k.json.api_key as string, instance: inst.json };
  };

  return { svc, url, dataDir, env: fullEnv, api, cli, tenant, stop };
}

/** Runs the real CLI (bin/estafeta.js → dist) with the given environment; parses --json output. */
export function runCli<T = any>(env: Record<string, string>, args: string[]): Promise<CliResult<T>> {
  return new Promise((resolve, reject) => {
    // The CLI compiled next to this helper (dist*/src/cli/main.js): bin/estafeta.js runs the same file.
    const child = spawn(process.execPath, [cliMain, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: any;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, json: json as T, stdout, stderr });
    });
  });
}

/** Polls until fn returns a truthy value or the deadline passes (no fixed sleeps in tests). */
export async function waitFor<T>(fn: () => Promise<T> | T, { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
