/**
 * Banning accounts with ejabberd 25.08's behaviour (API version 2): ban_account stores the ban in the
 * account's private storage, which blocks every login (see ban-enforcement.ts), and kicks its sessions;
 * the password is left alone (25.07 replaced it with a random one). get_ban_details reads the ban back;
 * unban_account removes it, and the same password logs in again.
 */
import { KeyedLock, conflict, defineCommand, type AccountKey, type HandlersFor } from '@service/plugin-api';
import { lastActivityService } from '@service/mod_last/api';
import { privateStorageService, type ClaimedNamespace } from '@service/mod_private/api';
import { host, user } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { bareJid, existingAccount } from '../lookup.js';
import { enforceBans, kickError } from './ban-enforcement.js';
import { BAN_FIELDS, BanRecords, NS_BANNED, type BanDetails } from './ban-records.js';
import { xep0082 } from '../vcard/last.js';

export const banCommands = [
  defineCommand({
    name: 'ban_account',
    tags: ['accounts', 'v2'],
    desc: 'Ban an account',
    longdesc:
      'Stores the ban (reason, bandate, and the account\'s last activity as of the ban: lastdate and lastreason) in the account\'s private storage, then closes its sessions: each client gets a ' +
      '<policy-violation/> stream error whose text gives the reason. From then on the account cannot log in: every SASL mechanism (PLAIN, SCRAM, X-OAUTH2) fails with <account-disabled/>, ' +
      'HTTP Basic, XML-RPC and OAuth\'s password forms refuse its password, and `check_password` answers 1. Its OAuth tokens are revoked. The password itself is not changed; `unban_account` lifts the ban. ' +
      'lastdate is the time (XEP-0082, UTC) of its last logout and lastreason the status it left then (from mod_last), or the ban\'s time and `ONLINE` when it was connected; both are empty when unknown. ' +
      'Needs mod_private. Fails with 404 when the account does not exist, 409 when it is already banned, 422 when mod_private is not enabled, and 400 for a host not served here.',
    note: 'improved in 25.08; kicks sessions, stores ban details in private storage (blocks login); needs mod_private',
    version: 2,
    args: [user, host, { name: 'reason', type: 'string', desc: 'Reason for banning user', example: 'Spaming other users' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'attacker', host: 'myserver.com', reason: 'Spaming other users' }, result: 0 }],
  }),
  defineCommand({
    name: 'get_ban_details',
    tags: ['accounts', 'v2'],
    desc: 'Get ban details about an account',
    longdesc:
      'The ban stored by `ban_account`, as name/value pairs: reason, bandate, lastdate, lastreason. An account that is not banned has none: the answer is an empty list. ' +
      'Needs mod_private. Fails with 404 when the account does not exist, 422 when mod_private is not enabled, and 400 for a host not served here.',
    note: 'added in 24.06',
    version: 2,
    args: [user, host],
    result: {
      name: 'ban_details',
      type: { list: { object: [{ name: 'name', type: 'string' }, { name: 'value', type: 'string' }] }, item: 'detail' },
      desc: 'reason, bandate, lastdate and lastreason; empty when the account is not banned',
    },
    examples: [
      {
        args: { user: 'attacker', host: 'myserver.com' },
        result: [
          { name: 'reason', value: 'Spamming other users' },
          { name: 'bandate', value: '2024-04-22T09:16:47.975Z' },
          { name: 'lastdate', value: '2024-04-22T08:39:12.000Z' },
          { name: 'lastreason', value: 'Connection reset by peer' },
        ],
      },
    ],
  }),
  defineCommand({
    name: 'unban_account',
    tags: ['accounts', 'v2'],
    desc: 'Remove the ban from an account',
    longdesc:
      'Removes the ban stored by `ban_account`: the account logs in again with its password (OAuth tokens revoked by the ban stay revoked). ' +
      'Needs mod_private. Fails with 404 when the account does not exist, 409 when it is not banned, 422 when mod_private is not enabled, and 400 for a host not served here.',
    note: 'added in 24.06; removes the ban',
    version: 2,
    args: [user, host],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'attacker', host: 'myserver.com' }, result: 0 }],
  }),
] as const;

export function banHandlers(ctx: AdminContext): HandlersFor<typeof banCommands> {
  const { xmpp, tokens } = ctx.services;
  // Claimed at start: a restart or stop of mod_private restarts this module too (it consumes its service),
  // so the claim lives as long as both.
  const claimed = ctx.find(privateStorageService)?.claim(NS_BANNED);
  if (claimed) ctx.onStop(() => claimed.release());
  const bans = new BanRecords(claimed, ctx.services.caches);
  ctx.onStop(() => bans.leave());
  enforceBans(ctx, bans);
  const changes = new KeyedLock();
  const privateStorage = (command: string): ClaimedNamespace => {
    need(ctx, privateStorageService, command);
    return claimed!;
  };

  /** The account's last activity, read before the ban closes its sessions. */
  const lastActivity = async (account: AccountKey, now: string): Promise<Pick<BanDetails, 'lastdate' | 'lastreason'>> => {
    if ((await xmpp.sessions.byAccount(bareJid(account))).length > 0) return { lastdate: now, lastreason: 'ONLINE' };
    const last = ctx.find(lastActivityService);
    const record = await last?.get(account.user, account.host);
    return record ? { lastdate: xep0082(record.timestamp), lastreason: record.status } : { lastdate: '', lastreason: '' };
  };

  return {
    ban_account: async ({ user, host, reason }, call) => {
      const storage = privateStorage('ban_account');
      const account = await existingAccount(ctx, user, host);
      const jid = bareJid(account);
      // Two bans of one account at once: the second sees the first and is refused.
      await changes.run(jid, async () => {
        const existing = await bans.read(account);
        if (existing) throw conflict(`account ${jid} is already banned (since ${existing.bandate || 'an unknown date'}${existing.reason ? `: ${existing.reason}` : ''})`);
        // Whole seconds, as get_last writes the same instants.
        const bandate = xep0082(Date.now());
        const ban: BanDetails = { reason, bandate, ...(await lastActivity(account, bandate)) };
        // Stored first: from here on no new login gets in, so a client that reconnects at once after
        // the kick is refused.
        await bans.write(storage, account, ban);
        const kicked = await xmpp.kickAccount(jid, kickError(ban));
        const revoked = await tokens.revokeAccount(account);
        call.log.info({ account: jid, kicked, revoked }, 'account %s banned: %d session(s) closed, %d token(s) revoked', jid, kicked, revoked);
      });
    },
    get_ban_details: async ({ user, host }) => {
      privateStorage('get_ban_details');
      const ban = await bans.read(await existingAccount(ctx, user, host));
      return ban ? BAN_FIELDS.map((name) => ({ name, value: ban[name] })) : [];
    },
    unban_account: async ({ user, host }, call) => {
      const storage = privateStorage('unban_account');
      const account = await existingAccount(ctx, user, host);
      const jid = bareJid(account);
      await changes.run(jid, async () => {
        if (!(await bans.remove(storage, account))) throw conflict(`account ${jid} is not banned`);
      });
      call.log.info({ account: jid }, 'account %s unbanned', jid);
    },
  };
}
