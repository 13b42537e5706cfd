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
