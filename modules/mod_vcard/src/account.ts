/**
 * Account names as the API receives them from commands: normalized like JIDs (so 'Alice' is 'alice'),
 * and refused with the argument named when they cannot be a JID part.
 */
import { InvalidJid, badArgument, nameprep, nodeprep } from '@service/kernel';

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
