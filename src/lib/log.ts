/**
 * Diagnostics: JSON lines on stdout from one pino logger, a child per component. Mail events
 * (what a customer sees in a mail's log) are store rows, never these lines. Never log secrets
 * or message bodies.
 */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}

/**
 * A listener's ready line (CONTRACT §1: "logs one line naming it and its address"): written at
 * info whatever the configured level, short of `silent`, so an operator on `warn` still sees
 * where the service listens.
 */
export function logReady(log: Logger, fields: Record<string, unknown>, msg: string): void {
  const out = log.isLevelEnabled('info') || log.level === 'silent' ? log : log.child({}, { level: 'info' });
  out.info({ event: 'listener.ready', ...fields }, msg);
}
