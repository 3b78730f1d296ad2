/**
 * Passwords and existence: change_password, check_account, check_password, check_password_hash.
 *
 * check_account and check_password answer a yes/no question, so "no" is the result 1 (no such account,
 * wrong password). Everything else that goes wrong is an error that names what is at fault.
 */
import { createHash, getHashes, timingSafeEqual } from 'node:crypto';
import { CommandError, accountKey, badArgument, defineCommand, failed, notFound, type HandlersFor } from '@service/plugin-api';
import { host, user } from '../args.js';
import type { AdminContext } from '../context.js';
import { bareJid, servedHost } from '../lookup.js';

/** Erlang's names for hashes (ejabberd passes them to its crypto library) that Node spells differently. */
const ERLANG_NAMES: Readonly<Record<string, string>> = {
  sha: 'sha1',
  sha3_224: 'sha3-224',
  sha3_256: 'sha3-256',
  sha3_384: 'sha3-384',
  sha3_512: 'sha3-512',
  blake2b: 'blake2b512',
  blake2s: 'blake2s256',
};

/** What the error for an unknown method suggests; every name of Node's crypto.getHashes() works too. */
const COMMON_METHODS = 'md5, sha (or sha1), sha224, sha256, sha384, sha512, sha3_256, sha3_512, blake2b, ripemd160';

export const passwordCommands = [
  defineCommand({
    name: 'change_password',
    tags: ['accounts'],
    desc: 'Change the password of an account',
    longdesc:
      'Stores the new password as `auth_password_format` says (SCRAM by default). Sessions stay connected; HTTP Basic and XML-RPC calls with the old password fail from now on. ' +
      'Fails with 404 when the account does not exist, and with 400 when the host is not served here or `newpass` is empty, contains a NUL character or is longer than 1024 characters.',
    args: [user, host, { name: 'newpass', type: 'string', desc: 'New password for user', example: 'blank' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'peter', host: 'myserver.com', newpass: 'blank' }, result: 0 }],
  }),
  defineCommand({
    name: 'check_account',
    tags: ['accounts'],
    desc: 'Check if an account exists or not',
    longdesc: 'Answers 0 when the account exists and 1 when it does not. A host that is not served here, or a user name that cannot be a JID local part, is a 400.',
    args: [user, host],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'peter', host: 'myserver.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'check_password',
    tags: ['accounts'],
    desc: 'Check if a password is correct',
    longdesc:
      'Answers 0 when the password logs the account in, and 1 otherwise: a wrong password, an account that does not exist, or a banned account (see `ban_account`: ' +
      'its password is right but does not log it in). A host that is not served here is a 400.',
    args: [user, host, { name: 'password', type: 'string', desc: 'Password to check', example: 'secret' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'peter', host: 'myserver.com', password: 'secret' }, result: 0 }],
  }),
  defineCommand({
    name: 'check_password_hash',
    tags: ['accounts'],
    desc: 'Check if the password hash is correct',
    longdesc:
      'Answers 0 when `passwordhash` is the hex digest, by `hashmethod`, of the account\'s password (UTF-8), and 1 when it is not or the account is banned (as `check_password`). ' +
      `\`hashmethod\` is a hash of Node's crypto library (\`crypto.getHashes()\`, case-insensitive) or its Erlang name: ${COMMON_METHODS}. ` +
      'It needs the password itself, so it works for accounts whose password is stored in plain (`auth_password_format: plain`, or not yet converted by `convert_to_scram`); ' +
      'for a password stored as SCRAM keys, from which no digest of the password can be computed, it fails with 422 and says so. ' +
      'Other failures: 404 when the account does not exist; 400 for an unknown hash method, a hash that is not hexadecimal or not as long as that method\'s digests, or a host not served here.',
    note: 'hash methods of the platform crypto library',
    args: [
      user,
      host,
      { name: 'passwordhash', type: 'string', desc: 'Password\'s hash value', example: '5ebe2294ecd0e0f08eab7690d2a6ee69' },
      { name: 'hashmethod', type: 'string', desc: 'Name of hash method', example: 'md5' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'peter', host: 'myserver.com', passwordhash: '5ebe2294ecd0e0f08eab7690d2a6ee69', hashmethod: 'md5' }, result: 0 }],
  }),
] as const;

export function passwordHandlers(ctx: AdminContext): HandlersFor<typeof passwordCommands> {
  const { accounts } = ctx.services;
  return {
    change_password: async ({ user, host, newpass }) => {
      try {
        await accounts.setPassword(user, servedHost(ctx, host), newpass);
      } catch (err) {
        // The account service names its own argument `password`; this command calls it `newpass`.
        if (err instanceof CommandError && err.argument === 'password') throw badArgument('newpass', `newpass: ${err.message}`);
        throw err;
      }
    },
    check_account: ({ user, host }) => accounts.exists(user, servedHost(ctx, host)),
    check_password: ({ user, host, password }) => accounts.checkPassword(user, servedHost(ctx, host), password),
    check_password_hash: async ({ user, host, passwordhash, hashmethod }) => {
      const method = hashMethod(hashmethod);
      const given = hexDigest(passwordhash, method, hashmethod);
      const account = accountKey(user, servedHost(ctx, host));
      const jid = bareJid(account);
      const stored = await accounts.storedPassword(account.user, account.host);
      if (!stored) throw notFound(`account ${jid} does not exist`);
      if (stored.format !== 'plain') {
        throw failed(
          `the password of ${jid} is stored as salted SCRAM keys, from which no ${hashmethod} digest of it can be computed: ` +
            'check_password_hash works only for passwords stored in plain (auth_password_format: plain); use check_password',
        );
      }
      const actual = createHash(method).update(stored.password, 'utf8').digest();
      if (!timingSafeEqual(actual, given)) return false;
      return (await accounts.loginRefusal(account.user, account.host)) === undefined;
    },
  };
}

/** Node's name of the hash, from Node's or Erlang's spelling, any case; 400 listing the common ones. */
function hashMethod(text: string): string {
  const lower = text.trim().toLowerCase();
  const name = ERLANG_NAMES[lower] ?? lower;
  // getHashes() lists one spelling per digest; OpenSSL also knows aliases such as SHA-256.
  if (!getHashes().some((h) => h.toLowerCase() === name) && !knownToOpenSsl(name)) {
    throw badArgument('hashmethod', `unknown hash method '${text}': use one of ${COMMON_METHODS}, or another name of Node's crypto.getHashes()`);
  }
  return name;
}

function knownToOpenSsl(name: string): boolean {
  try {
    createHash(name);
    return true;
  } catch {
    return false;
  }
}

/** The digest `text` spells in hex, which must be as long as the method's digests. */
function hexDigest(text: string, method: string, methodText: string): Buffer {
  const hex = text.trim();
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) throw badArgument('passwordhash', 'passwordhash must be the hex digest of the password (an even number of hex digits)');
  const expected = createHash(method).digest().length;
  if (hex.length !== expected * 2) {
    throw badArgument('passwordhash', `a ${methodText} digest is ${expected * 2} hex digits long; passwordhash has ${hex.length}`);
  }
  return Buffer.from(hex, 'hex');
}
