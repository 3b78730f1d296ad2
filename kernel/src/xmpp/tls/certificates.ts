/**
 * TLS certificates for client streams: the PEM files of `certfiles` (certificate chain and key in one file,
 * or across files), chosen per virtual host by SNI; when none are configured, a self-signed certificate for
 * the virtual hosts is generated with the system's openssl into the data directory, and reused while it
 * covers them.
 */
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Logger } from '../../log/logger.js';

const run = promisify(execFile);

export interface LoadedCertificate {
  readonly file: string;
  readonly domains: readonly string[];
  readonly notAfter: Date;
  readonly context: SecureContext;
}

export interface CertificateStore {
  readonly certificates: readonly LoadedCertificate[];
  /** The context for a server name (SNI), or the first certificate's. */
  contextFor(servername: string | undefined): SecureContext;
  readonly defaultContext: SecureContext;
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

function domainsOf(certificate: X509Certificate): string[] {
  const san = certificate.subjectAltName ?? '';
  const names = san
    .split(/,\s*/)
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  if (names.length) return names;
  const cn = /CN=([^\n,]+)/.exec(certificate.subject)?.[1];
  return cn ? [cn.toLowerCase()] : [];
}

function covers(domains: readonly string[], host: string): boolean {
  return domains.some((d) => d === host || (d.startsWith('*.') && host.endsWith(d.slice(1)) && !host.slice(0, -d.length + 1).includes('.')));
}

/** Reads PEM files; each certificate is paired with the key found with it (same file, or another file). */
export async function loadCertificates(files: readonly string[]): Promise<LoadedCertificate[]> {
  const chains: Array<{ file: string; pems: string[] }> = [];
  const keys: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new Error(`cannot read the certificate file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    const blocks = [...text.matchAll(PEM_BLOCK)];
    const certs = blocks.filter((b) => b[1] === 'CERTIFICATE').map((b) => b[0]);
    keys.push(...blocks.filter((b) => b[1]!.endsWith('PRIVATE KEY')).map((b) => b[0]));
    if (certs.length) chains.push({ file, pems: certs });
  }
  return chains.map(({ file, pems }) => {
    const leaf = new X509Certificate(pems[0]!);
    const key = keys.find((k) => leaf.checkPrivateKey(createPrivateKey(k)));
    if (!key) throw new Error(`no private key matches the certificate in ${file}`);
    return { file, domains: domainsOf(leaf), notAfter: new Date(leaf.validTo), context: createSecureContext({ cert: pems.join('\n'), key }) };
  });
}

/** A self-signed certificate covering the hosts (and their subdomains), made once and kept under data_dir. */
export async function selfSignedCertificate(dataDir: string, hosts: readonly string[], logger: Logger): Promise<string> {
  const dir = join(dataDir, 'certs');
  const file = join(dir, 'selfsigned.pem');
  try {
    const existing = new X509Certificate(await readFile(file));
    const domains = domainsOf(existing);
    if (hosts.every((h) => covers(domains, h)) && new Date(existing.validTo) > new Date(Date.now() + 86_400_000)) return file;
  } catch {
    // Missing or unreadable: make one.
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const key = join(dir, 'selfsigned.key.tmp');
  const cert = join(dir, 'selfsigned.crt.tmp');
  const san = hosts.flatMap((h) => [`DNS:${h}`, `DNS:*.${h}`]).join(',');
  try {
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650',
      '-subj', `/CN=${hosts[0]}`, '-addext', `subjectAltName=${san}`, '-keyout', key, '-out', cert,
    ]);
    const pem = `${await readFile(cert, 'utf8')}${await readFile(key, 'utf8')}`;
    await writeFile(file, pem, { mode: 0o600 });
    await chmod(file, 0o600);
  } catch (err) {
    throw new Error(`no certfiles are configured and a self-signed certificate could not be generated with openssl: ${(err as Error).message}`);
  } finally {
    await rm(key, { force: true });
    await rm(cert, { force: true });
  }
  logger.warn({ file, hosts }, 'generated a self-signed certificate for %s: clients will not trust it; configure certfiles for production', hosts.join(', '));
  return file;
}

export function certificateStore(certificates: readonly LoadedCertificate[]): CertificateStore {
  if (!certificates.length) throw new Error('no certificate loaded');
  const defaultContext = certificates[0]!.context;
  return {
    certificates,
    defaultContext,
    contextFor(servername) {
      if (!servername) return defaultContext;
      const host = servername.toLowerCase();
      return certificates.find((c) => covers(c.domains, host))?.context ?? defaultContext;
    },
  };
}
