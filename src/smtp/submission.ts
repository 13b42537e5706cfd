/** SMTP submission door (CONTRACT §4): smtp-server hooks → the accept path. */
import type { Db } from '../store/db';
import type { Config } from '../config/load';
import type { Logger } from '../lib/log';
import type { Accept } from '../accept/types';

export interface Listener { name: string; port: number; close(): Promise<void> }
export interface SubmissionDeps { db: Db; config: Readonly<Config>; log: Logger; accept: Accept }

export async function startSubmission(deps: SubmissionDeps): Promise<Listener[]> {
  void deps;
  return [];
}
