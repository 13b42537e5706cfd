/**
 * The bytes of a compiled nodemailer MimeNode tree, produced in one synchronous pass.
 *
 * Why: MimeNode.build() streams the tree through a PassThrough, a pipeline per encoded part and
 * a setImmediate per step. Measured on `npm run bench`, that cost 0.38 ms of CPU per send and,
 * worse, a send waited ~11 ms for its MIME, because every build in flight advances one step
 * per turn of the worker's loop. The tree, its headers (buildHeaders) and its encoders
 * (nodemailer's own qp and base64 Encoder transforms, fed their input in one call) are
 * nodemailer's; this file only walks the tree in the order MimeNode.stream() does. A test builds
 * the same trees both ways and requires identical bytes.
 *
 * Only trees whose every content is a string or a Buffer qualify (the accept path's case):
 * anything else (streams, files, URLs, raw nodes, transforms) answers null, and the caller
 * builds with MimeNode.build().
 */
import * as base64 from 'nodemailer/lib/base64';
import * as qp from 'nodemailer/lib/qp';
import type MimeNode from 'nodemailer/lib/mime-node';

/** The members of MimeNode that stream() reads (public at runtime, untyped or private in @types). */
interface Node {
  content?: unknown;
  multipart?: boolean;
  boundary?: string;
  childNodes: Node[];
  _raw?: unknown;
  _transforms?: unknown[];
  _processFuncs?: unknown[];
  newline?: unknown;
  contentType?: string;
  buildHeaders(): string;
  getTransferEncoding(): string | false;
}

interface SyncTransform { push(chunk: unknown, encoding?: BufferEncoding): boolean; _transform(c: Buffer, e: string, done: (err?: Error | null) => void): void; _flush(done: (err?: Error | null) => void): void }

const plain = (content: unknown): content is string | Buffer => typeof content === 'string' || Buffer.isBuffer(content);

function qualifies(node: Node, root: boolean): boolean {
  if (node._raw) return false;
  if (root && (node._transforms?.length || node._processFuncs?.length || node.newline)) return false;
  if (node.content && !plain(node.content)) return false;
  return node.childNodes.every((c) => qualifies(c, false));
}

/** Runs one of nodemailer's encoder transforms over the whole input, synchronously. */
function encode(encoder: SyncTransform, input: Buffer, out: Buffer[]): void {
  let failed: Error | null | undefined;
  encoder.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (chunk !== null && chunk !== undefined) out.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), encoding ?? 'utf8'));
    return true;
  };
  const done = (err?: Error | null): void => {
    failed ??= err;
  };
  if (input.length) encoder._transform(input, 'buffer', done);
  encoder._flush(done);
  if (failed) throw failed;
}

function write(node: Node, out: Buffer[]): void {
  const transferEncoding = node.getTransferEncoding();
  // buildHeaders() asks for the transfer encoding again, and the answer scans the whole text
  // content once more (~20% of a 2 KB message's build): it is given the one just computed. The
  // shadowing own property lives only for this call; the node is unchanged afterwards.
  node.getTransferEncoding = () => transferEncoding;
  let headers: string;
  try {
    headers = node.buildHeaders();
  } finally {
    delete (node as Partial<Node>).getTransferEncoding;
  }
  out.push(Buffer.from(`${headers}\r\n\r\n`));
  if (node.content) {
    const input = Buffer.isBuffer(node.content) ? node.content : Buffer.from(node.content as string);
    if (transferEncoding === 'base64') encode(new base64.Encoder() as unknown as SyncTransform, input, out);
    else if (transferEncoding === 'quoted-printable') {
      // As stream(): outside text/*, a lone CR or LF is data and is encoded.
      const binary = !/^text\//i.test(node.contentType ?? '');
      encode(new qp.Encoder({ binary } as qp.EncoderOptions) as unknown as SyncTransform, input, out);
    } else out.push(input);
  }
  if (!node.multipart) return;
  node.childNodes.forEach((child, i) => {
    out.push(Buffer.from(`${i > 0 ? '\r\n' : ''}--${node.boundary}\r\n`));
    write(child, out);
  });
  out.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
}

/** The message MimeNode.build() would produce, or null when the tree needs the streaming build. */
export function mimeBytes(root: MimeNode): Buffer | null {
  const node = root as unknown as Node;
  if (!qualifies(node, true)) return null;
  const out: Buffer[] = [];
  write(node, out);
  // As the LastNewline stage of createReadStream: the message ends with a line break.
  let lastByte = -1;
  for (let i = out.length - 1; i >= 0 && lastByte === -1; i--) if (out[i].length) lastByte = out[i][out[i].length - 1];
  if (lastByte === 0x0d) out.push(Buffer.from('\n'));
  else if (lastByte !== 0x0a) out.push(Buffer.from('\r\n'));
  return Buffer.concat(out);
}
