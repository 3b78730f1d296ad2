/**
 * The text dump format (docs/data.md), shared by dump, dump_table and load. JSON lines, UTF-8:
 *
 *   {"format":"service-dump","version":1,"created":…,"server":…,"node":…}
 *   {"store":"sql","table":"users","columns":["host","username",…],"rows":2}
 *   ["localhost","alice",…]                one JSON array per row, in `columns` order
 *   …                                      (more tables: a table line, then its rows)
 *   {"end":true,"tables":12,"rows":3456}   the last line: a file without it is truncated
 *
 * Values: null, strings and numbers as JSON; integers beyond ±2^53 as {"$int":"<digits>"}; blobs as
 * {"$blob":"<base64>"}. Version 1 is read by every later release.
 */
export const DUMP_FORMAT = 'service-dump';
export const DUMP_VERSION = 1;

export type DumpValue = null | string | number | { $int: string } | { $blob: string };

export function encodeValue(value: unknown): DumpValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : { $int: value.toString() };
  }
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return { $blob: value.toString('base64') };
  return String(value);
}

/** The SQLite value of a dumped one; throws a message (no argument name) when it is not one. */
export function decodeValue(value: unknown): null | string | number | bigint | Buffer {
  if (value === null || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a number must be finite');
    return value;
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    const keys = Object.keys(v);
    if (keys.length === 1 && typeof v.$int === 'string' && /^-?\d+$/.test(v.$int)) return BigInt(v.$int);
    if (keys.length === 1 && typeof v.$blob === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v.$blob)) return Buffer.from(v.$blob, 'base64');
  }
  throw new Error(`${JSON.stringify(value).slice(0, 60)} is not a dump value (null, a string, a number, {"$int":…} or {"$blob":…})`);
}
