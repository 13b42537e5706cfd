/**
 * Requests Node's HTTP parser refuses before Koa sees them (a header section over 16 KB, a
 * malformed request line or header, Content-Length with chunked): answered like every other error
 * of the door, problem+json with an X-Request-Id and X-Trace-Id (spec, Cross-cutting conventions),
 * instead of Node's bare status line. The connection closes: the parser cannot go on.
 */
import crypto from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomHex } from '../lib/tokens';
import { problemBody } from './middleware/problem';

const answers: Record<string, { status: number; code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'request_header_fields_too_large', detail: 'The request line and headers exceed 16 KB.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', detail: 'The request was not received in time.' },
};
const malformed = { status: 400, code: 'malformed_request', detail: 'The request is not valid HTTP/1.1.' };

export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, code, detail } = answers[err.code ?? ''] ?? malformed;
  const requestId = crypto.randomUUID();
  const traceId = randomHex(16);
  const title = STATUS_CODES[status] ?? 'Error';
  const body = JSON.stringify(problemBody({ code, status, title, detail, traceId, requestId }));
  socket.end([
    `HTTP/1.1 ${status} ${title}`, 'Content-Type: application/problem+json', `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`, `X-Trace-Id: ${traceId}`, 'Connection: close', '', body,
  ].join('\r\n'));
}
