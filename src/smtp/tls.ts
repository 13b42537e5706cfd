/**
 * The certificate of the SMTP listeners: the operator's PEM files (tlsCert/tlsKey), or a
 * self-signed pair generated ONCE in `<dataDir>/tls/` and reused on every later start, so clients
 * that pin it keep working. Never generates when the operator configured files.
 */
import fs from 'node:fs';
import path from 'node:path';
import selfsigned from 'selfsigned';
import type { Config } from '../config/load';
import { makeDir } from '../lib/paths';

export interface TlsCredentials { key: Buffer; cert: Buffer; source: 'configured' | 'generated' | 'reused' }

const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

function readPem(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read the TLS ${what} ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Write to a temp name, fsync, rename: a crash never leaves a half-written PEM behind. */
function writeAtomic(file: string, data: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', mode);
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

export async function loadTlsCredentials(config: Readonly<Pick<Config, 'dataDir' | 'hostname' | 'tlsCert' | 'tlsKey'>>): Promise<TlsCredentials> {
  if (config.tlsCert !== null || config.tlsKey !== null) {
    if (config.tlsCert === null || config.tlsKey === null) throw new Error('ESTAFETA_TLS_CERT and ESTAFETA_TLS_KEY must be set together');
    return { cert: readPem(config.tlsCert, 'certificate'), key: readPem(config.tlsKey, 'key'), source: 'configured' };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certFile = path.join(dir, 'smtp-cert.pem');
  const keyFile = path.join(dir, 'smtp-key.pem');
  // Both or neither: a lone file (a crash between the two writes) means generate again.
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) {
    return { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile), source: 'reused' };
  }
  makeDir(dir, 0o700);
  const now = new Date();
  const pems = await selfsigned.generate([{ name: 'commonName', value: config.hostname }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: now,
    notAfterDate: new Date(now.getTime() + TEN_YEARS_MS),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: config.hostname }, { type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  // Key first, certificate last: the certificate's presence marks a complete pair.
  writeAtomic(keyFile, pems.private, 0o600);
  writeAtomic(certFile, pems.cert, 0o600); // public, but every file of the data dir is 0600 (README)
  return { cert: Buffer.from(pems.cert), key: Buffer.from(pems.private), source: 'generated' };
}
