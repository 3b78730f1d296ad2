/**
 * What node names, item ids and subscribed JIDs may be: they are key columns of 191 characters (the
 * longest an index of MariaDB's utf8mb4 takes), so a longer one is refused with <not-acceptable/> before
 * it reaches the database, rather than failing there as an internal error (or being cut by MySQL).
 */
import { StanzaError } from '@service/plugin-api';

export const MAX_KEY_LENGTH = 191;

/** The value, if it fits its column; else the request is not acceptable. */
export function keyName(what: 'node' | 'item id' | 'jid', value: string): string {
  if ([...value].length > MAX_KEY_LENGTH) throw new StanzaError('not-acceptable', `a ${what} is at most ${MAX_KEY_LENGTH} characters`);
  return value;
}
