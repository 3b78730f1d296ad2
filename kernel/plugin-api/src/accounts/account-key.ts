/**
 * Account names as the API receives them from commands: normalized like JIDs (so 'Alice' is 'alice'),
 * and refused with the argument named when they cannot be a JID part.
 */
import { badArgument } from '../commands/errors.js';
import { InvalidJid, nameprep, nodeprep } from '../jid/prep.js';

export interface AccountKey {
  readonly user: string;
  readonly host: string;
}

export function accountKey(user: string, host: string): AccountKey {
  try {
    return { user: nodeprep(user), host: nameprep(host) };
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(err.part === 'host' ? 'host' : 'user', err.message);
    throw err;
  }
}

export function hostKey(host: string): string {
  try {
    return nameprep(host);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument('host', err.message);
    throw err;
  }
}
