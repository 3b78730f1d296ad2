/**
 * Registered nicks (XEP-0045 §7.10): muc_register_nick and muc_unregister_nick, in API version 0 (the
 * account as one JID) and 3 (user and host, since 24.12). A registered nick is the account's on the whole
 * MUC service: another account cannot join any room of it under that nick.
 */
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import { host, service, user } from '../args.js';
import type { MucAdminContext } from '../context.js';
import { mucCall } from '../errors.js';
import { accountJid, bareJidArg, mucServiceName, nickArg } from '../lookup.js';

const nick = { name: 'nick', type: 'string', desc: 'Nick', example: 'Tim' } as const;
const jid = { name: 'jid', type: 'string', desc: 'User JID', example: 'tim@example.org' } as const;
const REGISTER_DOC =
  'Registers the nick for the account on the MUC service, replacing the nick it had registered: other accounts can no longer join a room of the service under it. ' +
  'Fails with 409 when another account holds the nick, with 400 when the service is not a MUC service of this server, the nick is empty or the account is not a valid JID.';
const UNREGISTER_DOC =
  'Removes the nick the account registered on the MUC service. Fails with 404 when it has none, with 400 when the service is not a MUC service of this server or the account is not a valid JID.';

export const nickCommands = [
  defineCommand({
    name: 'muc_register_nick',
    tags: ['muc'],
    desc: 'Register a nick to a User JID in a MUC service',
    longdesc: `API versions 0 to 2: the account as one JID. ${REGISTER_DOC}`,
    version: 0,
    args: [nick, jid, service],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { nick: 'Tim', jid: 'tim@example.org', service: 'conference.example.org' }, result: 0 }],
  }),
  defineCommand({
    name: 'muc_register_nick',
    tags: ['muc', 'v3'],
    desc: 'Register a nick to a User JID in a MUC service',
    longdesc: REGISTER_DOC,
    note: 'updated in 24.12',
    version: 3,
    args: [nick, user, host, service],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { nick: 'Tim', user: 'tim', host: 'example.org', service: 'conference.example.org' }, result: 0 }],
  }),
  defineCommand({
    name: 'muc_unregister_nick',
    tags: ['muc'],
    desc: 'Unregister the nick registered by that account in the MUC service',
    longdesc: `API versions 0 to 2: the account as one JID. ${UNREGISTER_DOC}`,
    version: 0,
    args: [jid, service],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { jid: 'tim@example.org', service: 'conference.example.org' }, result: 0 }],
  }),
  defineCommand({
    name: 'muc_unregister_nick',
    tags: ['muc', 'v3'],
    desc: 'Unregister the nick registered by that account in the MUC service',
    longdesc: UNREGISTER_DOC,
    note: 'updated in 24.12',
    version: 3,
    args: [user, host, service],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'tim', host: 'example.org', service: 'conference.example.org' }, result: 0 }],
  }),
] as const;

export function nickHandlers(ctx: MucAdminContext): HandlersFor<typeof nickCommands> {
  const register = async (nickname: string, account: string, serviceText: string) => {
    const checked = nickArg(nickname);
    const name = mucServiceName(ctx, serviceText);
    await mucCall(() => ctx.muc().registerNick(name, account, checked), 'nick');
  };
  const unregister = async (account: string, serviceText: string) => {
    const name = mucServiceName(ctx, serviceText);
    await mucCall(() => ctx.muc().unregisterNick(name, account));
  };
  const versioned = {
    'muc_register_nick@v0': (args: { nick: string; jid: string; service: string }) => register(args.nick, bareJidArg('jid', args.jid), args.service),
    'muc_register_nick@v3': (args: { nick: string; user: string; host: string; service: string }) => register(args.nick, accountJid(args.user, args.host), args.service),
    'muc_unregister_nick@v0': (args: { jid: string; service: string }) => unregister(bareJidArg('jid', args.jid), args.service),
    'muc_unregister_nick@v3': (args: { user: string; host: string; service: string }) => unregister(accountJid(args.user, args.host), args.service),
  };
  return versioned as unknown as HandlersFor<typeof nickCommands>;
}
