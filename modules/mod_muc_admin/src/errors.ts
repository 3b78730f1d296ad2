/**
 * mod_muc's failures as command failures: a MucError's kind becomes the error table's kind (404 for a
 * room or service that does not exist, 400 for a bad argument, 409 for a conflict with the room's state,
 * 422 when the room's rules refuse it), with mod_muc's message, and the argument at fault when the caller
 * knows which it is. Anything else is rethrown as it is (the command bus logs it as an internal fault).
 */
import { CommandError, type ErrorKind } from '@service/plugin-api';
import { MucError, type MucErrorKind } from '@service/mod_muc/api';

const KINDS: Readonly<Record<MucErrorKind, ErrorKind>> = {
  not_found: 'not_found',
  bad_argument: 'bad_argument',
  conflict: 'conflict',
  not_allowed: 'failed',
};

/** The command error for a MucError; `argument` names the argument a bad_argument is about. */
export function commandErrorOf(err: MucError, argument?: string): CommandError {
  const kind = KINDS[err.kind];
  return new CommandError(kind, err.message, kind === 'bad_argument' ? argument : undefined);
}

/** Runs one MucApi call, translating its MucError; `argument` names the argument a bad_argument is about. */
export async function mucCall<T>(call: () => Promise<T>, argument?: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof MucError) throw commandErrorOf(err, argument);
    throw err;
  }
}
