/**
 * The message spool: one file per accepted message under <dataDir>/messages/. Owned by the
 * accept path (writes) and delivery (reads, removes once every recipient is final).
 * A file is written whole to a temporary name, fsync'd, then renamed (Postfix: a queue file is
 * published only when complete); the directory fsync that makes renames durable is separate so
 * that one group commit pays it once for many files.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Spool {
  dir: string;
  /** Absolute path of a spool file name as stored in messages.spool_file. */
  pathOf(file: string): string;
  read(file: string): Promise<Buffer>;
  remove(file: string): Promise<void>;
  /** Writes `bytes` under `file`: temp file, fsync, rename. Durable only after syncDir(). */
  write(file: string, bytes: Buffer): Promise<void>;
  /** fsync of the spool directory: makes every rename before it durable. */
  syncDir(): Promise<void>;
  /** Names of the published files (temporary files excluded). */
  list(): Promise<string[]>;
  /** Removes temporary files left by a crash mid-write; returns how many. */
  removeTemporary(): Promise<number>;
}

const tmpPrefix = '.tmp-';

export function openSpool(dataDir: string): Spool {
  const dir = path.join(dataDir, 'messages');
  fs.mkdirSync(dir, { recursive: true });
  const pathOf = (file: string): string => path.join(dir, file);

  const write = async (file: string, bytes: Buffer): Promise<void> => {
    const tmp = pathOf(tmpPrefix + file);
    const fh = await fs.promises.open(tmp, 'w', 0o640);
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.promises.rename(tmp, pathOf(file));
  };

  const syncDir = async (): Promise<void> => {
    const fh = await fs.promises.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  };

  return {
    dir,
    pathOf,
    read: (file) => fs.promises.readFile(pathOf(file)),
    remove: (file) => fs.promises.rm(pathOf(file), { force: true }),
    write,
    syncDir,
    list: async () => (await fs.promises.readdir(dir)).filter((f) => !f.startsWith(tmpPrefix)),
    removeTemporary: async () => {
      const tmps = (await fs.promises.readdir(dir)).filter((f) => f.startsWith(tmpPrefix));
      await Promise.all(tmps.map((f) => fs.promises.rm(pathOf(f), { force: true })));
      return tmps.length;
    },
  };
}
