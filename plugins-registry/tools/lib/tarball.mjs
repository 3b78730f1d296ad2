/**
 * A minimal, deterministic gzip'd ustar writer and reader for plugin tarballs, in plain Node (node:zlib),
 * because the `tar` package is not installed at the repository root and the publishing tools must run with
 * nothing but Node 20. It writes what npm pack writes for a plugin: regular files only, under `package/`,
 * in the order given (the caller sorts), with a fixed mtime, uid/gid 0, no user or group names, and mode
 * 0644 or 0755; so packing the same files twice gives the same bytes (with the same zlib: the compressed
 * bytes may differ between zlib releases, which is why publish.mjs compares before replacing a version).
 * The reader is for verify.mjs, which looks inside a tarball to check its package.json against the index.
 */
import { gunzipSync, gzipSync, constants as zlibConstants } from 'node:zlib';

const BLOCK = 512;
/** npm's fixed mtime for packed files (1985-10-26T08:15:00Z), so tarballs do not depend on the clock. */
export const FIXED_MTIME = 499162500;

/** Splits a path into ustar's prefix (155 bytes) and name (100 bytes), or throws if it cannot fit. */
function splitPath(path) {
  const bytes = Buffer.byteLength(path);
  if (bytes <= 100) return { prefix: '', name: path };
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name) return { prefix, name };
  }
  throw new Error(`path too long for a ustar header: ${path}`);
}

function writeString(block, offset, length, value) {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new Error(`header field too long: ${value}`);
  bytes.copy(block, offset);
}

/** An octal number field: zero-padded digits and a NUL terminator, as GNU tar and node-tar write them. */
function writeOctal(block, offset, length, value) {
  const digits = value.toString(8);
  if (digits.length > length - 1) throw new Error(`number too large for a ustar header: ${value}`);
  writeString(block, offset, length, `${digits.padStart(length - 1, '0')}\0`);
}

function header({ path, size, mode, mtime }) {
  const block = Buffer.alloc(BLOCK);
  const { prefix, name } = splitPath(path);
  writeString(block, 0, 100, name);
  writeOctal(block, 100, 8, mode);
  writeOctal(block, 108, 8, 0); // uid
  writeOctal(block, 116, 8, 0); // gid
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, mtime);
  block.fill(0x20, 148, 156); // the checksum is computed with its own field as spaces
  block[156] = 0x30; // '0': a regular file
  writeString(block, 257, 6, 'ustar\0');
  writeString(block, 263, 2, '00');
  writeString(block, 345, 155, prefix);
  let sum = 0;
  for (const byte of block) sum += byte;
  writeString(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/**
 * Packs files into a gzip'd tarball. `files`: [{ path, data: Buffer, executable?: boolean }], written in
 * the given order.
 */
export function packTarGz(files, { mtime = FIXED_MTIME } = {}) {
  const parts = [];
  for (const { path, data, executable } of files) {
    if (path.startsWith('/') || path.split('/').includes('..')) throw new Error(`refusing to pack the path ${path}`);
    parts.push(header({ path, size: data.length, mode: executable ? 0o755 : 0o644, mtime }), data);
    const padding = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (padding) parts.push(Buffer.alloc(padding));
  }
  parts.push(Buffer.alloc(BLOCK * 2)); // end of archive
  const gz = gzipSync(Buffer.concat(parts), { level: zlibConstants.Z_BEST_COMPRESSION });
  gz[9] = 3; // the header's OS byte: Unix, whatever the platform packing it (mtime is already 0)
  return gz;
}

function readString(block, offset, length) {
  const end = block.indexOf(0, offset);
  return block.toString('utf8', offset, end === -1 || end > offset + length ? offset + length : end);
}

function readOctal(block, offset, length) {
  const text = readString(block, offset, length).trim();
  if (!/^[0-7]*$/.test(text)) throw new Error(`bad octal header field "${text}"`);
  return text ? parseInt(text, 8) : 0;
}

/**
 * Reads a gzip'd tarball: [{ path, type, mode, data }] for every entry (type '0' is a regular file). Throws
 * on a malformed archive or header checksum. Handles ustar prefixes; pax and GNU long names are reported as
 * their own entries (types 'x', 'g', 'L'), which a plugin tarball written by packTarGz never holds.
 */
export function readTarGz(bytes) {
  const tar = gunzipSync(bytes);
  const entries = [];
  for (let offset = 0; offset + BLOCK <= tar.length; ) {
    const block = tar.subarray(offset, offset + BLOCK);
    if (block.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
    if (sum !== readOctal(block, 148, 8)) throw new Error(`bad header checksum at byte ${offset}`);
    const size = readOctal(block, 124, 12);
    const prefix = readString(block, 345, 155);
    const name = readString(block, 0, 100);
    const type = String.fromCharCode(block[156] || 0x30);
    const start = offset + BLOCK;
    if (start + size > tar.length) throw new Error(`entry ${name} runs past the end of the archive`);
    entries.push({ path: prefix ? `${prefix}/${name}` : name, type, mode: readOctal(block, 100, 8), data: tar.subarray(start, start + size) });
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return entries;
}
