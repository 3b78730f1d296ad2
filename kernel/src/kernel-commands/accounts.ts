/**
 * Account commands that are always present: register, unregister, registered_users, registered_vhosts,
 * convert_to_scram.
 */
import { nameprep, nodeprep } from '@service/plugin-api';
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';

const user = { name: 'user', type: 'string', desc: 'User name (the local part of the JID)', example: 'alice' } as const;
const host = { name: 'host', type: 'string', desc: 'A virtual host served by this server', example: 'localhost' } as const;

export const accountCommands = [
  defineCommand({
    name: 'register',
    tags: ['accounts'],
    desc: 'Register an account',
    longdesc:
      'Creates the account `user@host` with the given password, stored as `auth_password_format` says (SCRAM by default). ' +
      'Fails with 409 when the account exists, and with 400 when the user name is not a valid JID local part, the host is not served here or the password is empty.',
    args: [user, host, { name: 'password', type: 'string', desc: 'The password (1 to 1024 characters)', example: 'SomEPass44' }],
    result: { name: 'res', type: 'restuple', desc: 'A confirmation text' },
    examples: [{ args: { user: 'bob', host: 'localhost', password: 'SomEPass44' }, result: 'User bob@localhost successfully registered' }],
  }),
  defineCommand({
    name: 'unregister',
    tags: ['accounts'],
    desc: 'Unregister an account',
    longdesc: 'Deletes the account and, through the `remove_user` hook, everything every module stores for it (roster, vCard, offline messages…). Fails with 404 when there is no such account.',
    args: [user, host],
    result: { name: 'res', type: 'restuple', desc: 'A confirmation text' },
    examples: [{ args: { user: 'bob', host: 'localhost' }, result: 'User bob@localhost unregistered' }],
  }),
  defineCommand({
    name: 'registered_users',
    tags: ['accounts'],
    desc: 'List all registered users in HOST',
    longdesc: 'The user names (local parts) of the accounts of a virtual host, sorted. Also callable as `GET /api/registered_users?host=…`.',
    args: [{ ...host, desc: 'Local vhost' }],
    result: { name: 'users', type: { list: 'string', item: 'username' }, desc: 'User names, sorted' },
    examples: [{ args: { host: 'localhost' }, result: ['alice', 'bob'] }],
  }),
  defineCommand({
    name: 'registered_vhosts',
    tags: ['server'],
    desc: 'List all registered vhosts in SERVER',
    args: [],
    result: { name: 'vhosts', type: { list: 'string', item: 'vhost' }, desc: 'The virtual hosts, sorted' },
    examples: [{ args: {}, result: ['example.com', 'localhost'] }],
  }),
  defineCommand({
    name: 'convert_to_scram',
    tags: ['sql'],
    desc: 'Convert the passwords of a vhost to SCRAM',
    longdesc:
      'Replaces every plain-text password stored for the vhost by salted SCRAM keys of the hashes `auth_scram_hash` names (SHA-1 by default). Accounts already stored as SCRAM are left as they are. ' +
      'Works on every storage backend. Set `auth_password_format: scram` so that new passwords are stored that way too.',
    args: [{ ...host, desc: 'Vhost which users\' passwords will be scrammed' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { host: 'localhost' }, result: 0 }],
  }),
] as const;

export function accountHandlers(services: KernelServices): HandlersFor<typeof accountCommands> {
  const { accounts } = services;
  const servedHost = (host: string) => accounts.servedHost(host);
  return {
    register: async ({ user, host, password }) => {
      await accounts.register(user, host, password);
      return `User ${nodeprep(user)}@${nameprep(host)} successfully registered`;
    },
    unregister: async ({ user, host }) => {
      await accounts.unregister(user, host);
      return `User ${nodeprep(user)}@${nameprep(host)} unregistered`;
    },
    registered_users: async ({ host }) => accounts.listUsers(servedHost(host)),
    registered_vhosts: () => [...services.config().hosts].sort(),
    convert_to_scram: async ({ host }, call) => {
      const converted = await accounts.convertToScram(servedHost(host), (done, total) => call.progress(done, total, 'accounts'));
      call.log.info({ host, converted }, 'converted %d plain passwords of %s to SCRAM', converted, host);
    },
  };
}
