/** Inbound MX door (issue 5): DSN bounces and ARF complaints for the platform's return paths. */
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Listener } from './submission';

export interface MxDeps { db: Db; config: Readonly<Config>; log: Logger }

export async function startMx(deps: MxDeps): Promise<Listener[]> {
  void deps;
  return [];
}
