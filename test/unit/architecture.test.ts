// Dependencies point inward (DESIGN.md rule 6, STYLE.md "Dependency direction"): a lint over
// the import lines of src/, so a wrong-way import fails the test run.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/lib/paths';

const srcDir = path.join(projectRoot, 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

function imports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

const area = (file: string): string => path.relative(srcDir, file).split(path.sep)[0].replace(/\.ts$/, '');

// Which top-level areas each area may import (besides itself). Doors sit on top; lib at the bottom.
const inner = ['lib', 'errors', 'store', 'spool', 'config'];
const domain = ['auth', 'instances', 'domains', 'senders', 'consent', 'suppressions', 'templates', 'fields', 'forms', 'tracking', 'accept', 'delivery', 'feedback', 'scheduler'];
const allowed: Record<string, string[]> = {
  lib: ['lib', 'errors'],
  errors: [],
  config: ['lib'],
  store: ['store', 'lib', 'errors'],
  spool: ['lib', 'errors'],
  http: [...inner, ...domain, 'http'],
  smtp: [...inner, ...domain, 'smtp'],
  cli: [...inner, ...domain, 'cli'],
  main: ['config', 'lib', 'service'],
  service: [...inner, ...domain, 'http', 'smtp'],
  types: [],
};
for (const d of domain) allowed[d] = [...inner, ...domain];

const exclusive: Record<string, string> = { koa: 'http', '@koa/router': 'http', 'koa-body': 'http', 'smtp-server': 'smtp', 'better-sqlite3': 'store', commander: 'cli' };

t.test('imports point inward and protocol libraries stay in their door', async (t) => {
  const problems: string[] = [];
  for (const file of sources(srcDir)) {
    const from = area(file);
    for (const spec of imports(file)) {
      const rel = path.relative(srcDir, file);
      if (spec.startsWith('.')) {
        const target = area(path.resolve(path.dirname(file), spec));
        if (target !== from && !(allowed[from] ?? []).includes(target)) problems.push(`${rel} imports ${target} (${spec})`);
      } else if (exclusive[spec] && exclusive[spec] !== from && !/^\s*import type/m.test(spec)) {
        const text = fs.readFileSync(file, 'utf8');
        const typeOnly = new RegExp(`import type [^;]*from ['"]${spec.replace('/', '\\/')}['"]`).test(text);
        if (!typeOnly) problems.push(`${rel} imports ${spec}, which belongs to ${exclusive[spec]}/`);
      }
    }
  }
  t.same(problems, [], 'no wrong-way imports');
});
