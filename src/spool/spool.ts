/**
 * The message spool: one file per accepted message under <dataDir>/messages/. Owned by the
 * accept path (writes) and delivery (reads, removes once every recipient is final).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Spool {
  dir: string;
  /** Absolute path of a spool file name as stored in messages.spool_file. */
  pathOf(file: string): string;
  read(file: string): Promise<Buffer>;
  remove(file: string): Promise<void>;
}

export function openSpool(dataDir: string): Spool {
  const dir = path.join(dataDir, 'messages');
  fs.mkdirSync(dir, { recursive: true });
  const pathOf = (file: string): string => path.join(dir, file);
  return {
    dir,
    pathOf,
    read: (file) => fs.promises.readFile(pathOf(file)),
    remove: (file) => fs.promises.rm(pathOf(file), { force: true }),
  };
}
