/**
 * The binary backup file: one file holding a consistent image of each covered SQLite database.
 *
 *   line 1  `SERVICE-DB-BACKUP 1`            (the magic and the container version)
 *   line 2  the manifest, one JSON object     (format, version, created, server, node, parts)
 *   then    each part's SQLite image, whole, in the manifest's order (`bytes` long, `sha256` its digest)
 *
 * Writing streams the images in and hashes them on the way; reading checks the magic, the manifest, the
 * total length and every digest while it copies each image out to a work directory.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { failed } from '@service/plugin-api';
import type { StoreName } from './stores.js';

export const MAGIC = 'SERVICE-DB-BACKUP 1\n';
const MAX_MANIFEST = 1024 * 1024;

export interface BackupPart {
  readonly store: StoreName;
  readonly bytes: number;
  readonly sha256: string;
  /** Tables and rows in the image, for reports. */
  readonly tables: number;
  readonly rows: number;
}

export interface Manifest {
  readonly format: 'service-db-backup';
  readonly version: 1;
  readonly created: string;
  /** The server release that wrote it. */
  readonly server: string;
  /** node_name of the server that wrote it (mnesia_change_nodename rewrites it). */
  readonly node: string;
  readonly parts: BackupPart[];
}

export interface PartImage {
  readonly store: StoreName;
  readonly file: string;
}

async function digest(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** Writes the container to `target` (a fresh file, 0600) from the image files. */
export async function writeContainer(target: string, header: Omit<Manifest, 'parts'>, images: Array<PartImage & { tables: number; rows: number }>): Promise<Manifest> {
  const parts: BackupPart[] = [];
  for (const image of images) {
    parts.push({ store: image.store, bytes: (await stat(image.file)).size, sha256: await digest(image.file), tables: image.tables, rows: image.rows });
  }
  const manifest: Manifest = { ...header, parts };
  const out = createWriteStream(target, { mode: 0o600, flags: 'wx' });
  const finished = new Promise<void>((done, fail) => {
    out.on('error', fail);
    out.on('finish', done);
  });
  try {
    out.write(MAGIC + JSON.stringify(manifest) + '\n');
    for (const image of images) await pipeline(createReadStream(image.file), out, { end: false });
    out.end();
    await finished;
  } catch (err) {
    out.destroy();
    throw err;
  }
  return manifest;
}

function bad(file: string, why: string): Error {
  return failed(`${file} is not a usable backup: ${why}; nothing was changed`);
}

/** Reads and checks the container's head: magic and manifest. Returns the manifest and where the images start. */
export async function readManifest(file: string): Promise<{ manifest: Manifest; offset: number; size: number }> {
  const handle = await open(file, 'r');
  let head: Buffer;
  let size: number;
  try {
    size = (await handle.stat()).size;
    head = Buffer.alloc(Math.min(size, MAGIC.length + MAX_MANIFEST + 1));
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  if (head.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) {
    const text = head.subarray(0, 16).toString('latin1');
    const hint = text.startsWith('SQLite format 3') ? ' (it is a bare SQLite database, not a backup made by the backup command)' : text.startsWith('{') ? ' (it looks like a text dump: use load)' : '';
    throw bad(file, `it does not start with ${JSON.stringify(MAGIC.trim())}${hint}`);
  }
  const end = head.indexOf(0x0a, MAGIC.length);
  if (end < 0) throw bad(file, 'its manifest is truncated or too long');
  let manifest: Manifest;
  try {
    manifest = JSON.parse(head.subarray(MAGIC.length, end).toString('utf8')) as Manifest;
  } catch (err) {
    throw bad(file, `its manifest is not JSON (${(err as Error).message})`);
  }
  checkManifest(file, manifest);
  const offset = end + 1;
  const expected = offset + manifest.parts.reduce((n, p) => n + p.bytes, 0);
  if (size !== expected) throw bad(file, `it is ${size} bytes long where its manifest says ${expected} (truncated or appended to)`);
  return { manifest, offset, size };
}

function checkManifest(file: string, m: Manifest): void {
  if (typeof m !== 'object' || m === null || m.format !== 'service-db-backup') throw bad(file, 'its manifest has no format "service-db-backup"');
  if (m.version !== 1) throw bad(file, `its container version ${String(m.version)} is not known to this server (it reads version 1)`);
  if (!Array.isArray(m.parts) || m.parts.length === 0) throw bad(file, 'its manifest lists no database');
  const seen = new Set<string>();
  for (const p of m.parts) {
    if (p?.store !== 'sql' && p?.store !== 'mnesia') throw bad(file, `its manifest names an unknown store ${JSON.stringify(p?.store)}`);
    if (seen.has(p.store)) throw bad(file, `its manifest lists the ${p.store} store twice`);
    seen.add(p.store);
    if (!Number.isSafeInteger(p.bytes) || p.bytes <= 0 || typeof p.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(p.sha256)) throw bad(file, `its manifest entry for ${p.store} has no valid size or sha256`);
  }
  if (typeof m.node !== 'string') throw bad(file, 'its manifest has no node name');
}

/** Checks the whole file and copies each image to `workDir/<store>.db`; the digests must match. */
export async function extractContainer(file: string, workDir: string): Promise<{ manifest: Manifest; images: PartImage[] }> {
  try {
    return await extract(file, workDir);
  } catch (err) {
    if ((err as { kind?: unknown }).kind) throw err;
    throw failed(`cannot read ${file}: ${(err as Error).message}; nothing was changed`);
  }
}

async function extract(file: string, workDir: string): Promise<{ manifest: Manifest; images: PartImage[] }> {
  const { manifest, offset } = await readManifest(file);
  const images: PartImage[] = [];
  let start = offset;
  for (const part of manifest.parts) {
    const target = join(workDir, `${part.store}.db`);
    const hash = createHash('sha256');
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(createReadStream(file, { start, end: start + part.bytes - 1 }), tap, createWriteStream(target, { mode: 0o600 }));
    if (hash.digest('hex') !== part.sha256) throw bad(file, `the ${part.store} image does not match its sha256 (the file is damaged)`);
    images.push({ store: part.store, file: target });
    start += part.bytes;
  }
  return { manifest, images };
}
