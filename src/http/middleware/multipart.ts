/**
 * multipart/form-data (RFC 7578) of a body already read under the body limit, split by busboy:
 * text parts become fields (arrays and objects arrive as JSON strings and are decoded by the
 * route), file parts come back as binary files with their filename and type. busboy's own
 * limits are lifted: the body limit (20 MB) and the route's rules bound every part.
 */
import busboy from 'busboy';
import { ServiceError } from '../../errors';

export interface FilePart { name: string; filename: string; contentType: string; content: Buffer }

const malformed = (why: string): ServiceError => new ServiceError('malformed_request', `The multipart body is malformed: ${why}.`);

/** Text parts as a body object (the last one of a name wins) and the file parts as they are. */
export function parseMultipart(body: Buffer, contentType: string): Promise<{ fields: Record<string, string>; files: FilePart[] }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        defParamCharset: 'utf8', // non-ASCII filenames as browsers and curl send them
        limits: { fieldSize: Infinity, fileSize: Infinity, fields: Infinity, files: Infinity, parts: Infinity, fieldNameSize: 1000 },
      });
    } catch (err) {
      reject(malformed((err as Error).message.replace(/\.$/, '')));
      return;
    }
    const fields: Record<string, string> = {};
    const files: FilePart[] = [];
    let malformedText: string | null = null;
    const reading: Promise<void>[] = [];
    parser.on('field', (name, value) => {
      // busboy decodes a text part (UTF-8 unless the part names a charset) and puts U+FFFD in
      // place of each byte that is not: that is no text the client wrote, so the body is malformed,
      // as a JSON body with such bytes is (busboy gives no other sign of it).
      if (value.includes('\uFFFD')) malformedText ??= name;
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      reading.push(new Promise<void>((done, fail) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', fail);
        stream.on('end', () => {
          files.push({ name, filename: info.filename ?? '', contentType: info.mimeType || 'application/octet-stream', content: Buffer.concat(chunks) });
          done();
        });
      }));
    });
    parser.on('error', (err: Error) => reject(malformed(err.message.replace(/\.$/, ''))));
    parser.on('close', () => {
      if (malformedText !== null) return reject(malformed(`the text part ${malformedText} is not UTF-8 (or the charset it names)`));
      Promise.all(reading).then(() => resolve({ fields, files }), (err: Error) => reject(malformed(err.message)));
    });
    parser.end(body);
  });
}
