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
