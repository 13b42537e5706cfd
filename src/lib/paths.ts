/**
 * Where the project's own files live, wherever the compiled code runs from
 * (dist/src/... after tsc). Schemas and config/default.json are read from here.
 */
import fs from 'node:fs';
import path from 'node:path';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'schema'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`project root not found above ${start}`);
    dir = parent;
  }
}

export const projectRoot = findRoot(__dirname);
export const schemaDir = path.join(projectRoot, 'schema');

/**
 * `mkdir -p` with `mode`. Node's own recursive mkdir loops forever (a core at 100%) where mkdir
 * answers ENOENT for a parent that exists, as a pseudo filesystem does (ESTAFETA_DATA_DIR=/proc/x):
 * here each level is made once, and a level that still cannot be made throws.
 */
export function makeDir(dir: string, mode: number): void {
  try {
    fs.mkdirSync(dir, { mode });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && fs.statSync(dir).isDirectory()) return;
    if (code !== 'ENOENT' || path.dirname(dir) === dir) throw err;
  }
  makeDir(path.dirname(dir), mode);
  fs.mkdirSync(dir, { mode });
}
