/** The delivery loop: drains queued mails to recipients' MX hosts (issue 5). */
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Spool } from '../spool/spool';

export interface Delivery {
  start(): void;
  /** Called by accept after a commit with queued mails: look for due work now. */
  wake(): void;
  /** Stops taking new work and waits (bounded) for attempts in flight. */
  stop(): Promise<void>;
}

export interface DeliveryDeps { db: Db; config: Readonly<Config>; log: Logger; spool: Spool }

export function createDelivery(deps: DeliveryDeps): Delivery {
  void deps;
  return { start: () => undefined, wake: () => undefined, stop: async () => undefined };
}
