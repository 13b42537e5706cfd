/** What the HTTP door is given by main.ts: the store and the pipeline services it calls. */
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Accept } from '../accept/types';
import type { Spool } from '../spool/spool';
import type { Delivery } from '../delivery';
import type { Metrics } from '../lib/metrics';

export interface HttpDeps {
  db: Db;
  config: Readonly<Config>;
  log: Logger;
  /** true once every listener is up and the store is open (GET /healthz). */
  isReady: () => boolean;
  /** true once a stop began (SIGTERM): keep-alive connections are ended, new requests refused. */
  isStopping: () => boolean;
  accept: Accept;
  spool: Spool;
  delivery: Delivery;
  /** Sends refused are counted by the door that answers them (every rule, its own and the accept path's). */
  refusedSends?: Metrics['refusedSends'];
}
