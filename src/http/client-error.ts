/**
 * Requests Node's HTTP parser refuses before Koa sees them (a header section over 16 KB, a
 * malformed request line or header, Content-Length with chunked): answered like every other error
 * of the door, problem+json with an X-Request-Id and X-Trace-Id (spec, Cross-cutting conventions),
 * instead of Node's bare status line. The connection closes: the parser cannot go on.
 */
import crypto from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { catalog, isErrorCode } from '../errors';
import { randomHex } from '../lib/tokens';
import { problemBody } from './middleware/problem';

const answers: Record<string, { status: number; code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'request_header_fields_too_large', detail: 'The request line and headers exceed 16 KB.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', detail: 'The request was not received in time.' },
  // RFC 9110 §9.1: a method the server does not recognize is 501 (Node's parser knows the
  // registered ones; every known method on a path that does not take it is a 405).
  HPE_INVALID_METHOD: { status: 501, code: 'not_implemented', detail: 'The request method is not implemented by this server.' },
};
const malformed = { status: 400, code: 'malformed_request', detail: 'The request is not valid HTTP/1.1.' };
const uriTooLong = { status: 414, code: 'uri_too_long', detail: 'The request target exceeds 16 KB.' };

export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, code, detail } = targetTooLong(err) ? uriTooLong : answers[err.code ?? ''] ?? malformed;
  socket.end(problemResponse(status, code, detail));
}

/**
 * The parser's limit covers the request line and the headers together; when the line itself
 * never ended (no line feed in the bytes it refused), the request target is what was too long:
 * RFC 9110 §15.5.15, 414 rather than 431.
 */
function targetTooLong(err: Error & { code?: string; rawPacket?: Buffer }): boolean {
  if (err.code !== 'HPE_HEADER_OVERFLOW' || !err.rawPacket) return false;
  const lineEnd = err.rawPacket.indexOf(0x0a);
  return lineEnd === -1 || lineEnd > 8192;
}

/** CONNECT asks a proxy for a tunnel: this server is none (Node would drop the socket unanswered). */
export function answerConnect(_req: IncomingMessage, socket: Duplex): void {
  if (!socket.writable) return void socket.destroy();
  socket.end(problemResponse(405, 'method_not_allowed', 'CONNECT is not accepted here: this is no proxy.', ['Allow: GET, HEAD, POST']));
}

/** An Expect other than 100-continue (RFC 9110 §10.1.1: 417), as a problem like the door's others. */
export function answerExpectation(_req: IncomingMessage, res: ServerResponse): void {
  const { head, body } = problemParts(417, 'expectation_failed', 'The only expectation this server meets is 100-continue.');
  res.writeHead(417, head);
  res.end(body);
}

function problemParts(status: number, code: string, detail: string): { title: string; head: Record<string, string>; body: string } {
  const requestId = crypto.randomUUID();
  const traceId = randomHex(16);
  // A code of the catalog keeps its one title (RFC 9457 §3.1.3: the title of a type never changes).
  const title = isErrorCode(code) ? catalog[code].title : STATUS_CODES[status] ?? 'Error';
  const body = JSON.stringify(problemBody({ code, status, title, detail, traceId, requestId }));
  return {
    title,
    head: { 'Content-Type': 'application/problem+json', 'Content-Length': String(Buffer.byteLength(body)), 'X-Request-Id': requestId, 'X-Trace-Id': traceId, Connection: 'close' },
    body,
  };
}

/** A whole HTTP/1.1 response, for a socket Node's server no longer answers on. */
function problemResponse(status: number, code: string, detail: string, extra: string[] = []): string {
  const { head, body } = problemParts(status, code, detail);
  return [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`, ...Object.entries(head).map(([k, v]) => `${k}: ${v}`), ...extra, '', body].join('\r\n');
}
