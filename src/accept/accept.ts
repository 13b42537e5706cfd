/** THE way in (= Postfix cleanup): validate → policy → assemble → spool + store → acknowledge. */
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Spool } from '../spool/spool';
import type { Accept } from './types';
import { ServiceError } from '../errors';

export interface AcceptDeps { db: Db; config: Readonly<Config>; log: Logger; spool: Spool; onQueued: () => void }

export function createAccept(deps: AcceptDeps): Accept {
  void deps;
  return {
    submit: async () => {
      throw new ServiceError('service_unavailable', 'Sending is not available yet.');
    },
  };
}
