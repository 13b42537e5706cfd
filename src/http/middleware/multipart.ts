/**
 * multipart/form-data (RFC 7578) of a body already read under the body limit: text parts become
 * fields (arrays and objects arrive as JSON strings and are decoded by the route), file parts
 * are returned as binary files with their filename and type.
 */
import { ServiceError } from '../../errors';

export interface FilePart { name: string; filename: string; contentType: string; content: Buffer }
export interface TextPart { name: string; value: string }

const malformed = (why: string): ServiceError => new ServiceError('malformed_request', `The multipart body is malformed: ${why}.`);

function param(header: string, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${name}=([^;\\s]+)`, 'i').exec(header);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
}

export function splitMultipart(body: Buffer, boundary: string): { texts: TextPart[]; files: FilePart[] } {
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  let pos = body.indexOf(delimiter);
  if (pos === -1) throw malformed('no boundary');
  pos += delimiter.length;
  const texts: TextPart[] = [];
  const files: FilePart[] = [];
  for (;;) {
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break; // closing delimiter "--"
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) throw malformed('bad delimiter line');
    pos += 2;
    const headEnd = body.indexOf('\r\n\r\n', pos);
    if (headEnd === -1) throw malformed('part without headers');
    const headers = body.subarray(pos, headEnd).toString('utf8').split('\r\n');
    const end = body.indexOf(next, headEnd + 4);
    if (end === -1) throw malformed('unterminated part');
    const content = body.subarray(headEnd + 4, end);
    pos = end + next.length;
    const disposition = headers.find((h) => /^content-disposition:/i.test(h)) ?? '';
    const type = headers.find((h) => /^content-type:/i.test(h));
    const name = param(disposition, 'name');
    if (name === undefined) throw malformed('a part without a name');
    const filename = param(disposition, 'filename');
    if (filename === undefined) texts.push({ name, value: content.toString('utf8') });
    else files.push({ name, filename, contentType: type ? type.slice(type.indexOf(':') + 1).trim() : 'application/octet-stream', content });
  }
  return { texts, files };
}

/** Returns the text parts as a body object and the file parts as they are. */
export function parseMultipart(body: Buffer, boundary: string): { fields: Record<string, string>; files: FilePart[] } {
  const { texts, files } = splitMultipart(body, boundary);
  const fields: Record<string, string> = {};
  for (const t of texts) fields[t.name] = t.value;
  return { fields, files };
}
