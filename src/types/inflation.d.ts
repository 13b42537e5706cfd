// inflation (the Content-Encoding decoder co-body and koa-body use) ships no types.
declare module 'inflation' {
  import type { IncomingMessage } from 'node:http';
  /** The request decoded per its Content-Encoding (gzip, deflate, identity); 415 error for others. */
  function inflate(req: IncomingMessage, options?: { limit?: number }): NodeJS.ReadableStream;
  export = inflate;
}
