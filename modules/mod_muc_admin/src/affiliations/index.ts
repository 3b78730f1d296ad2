/**
 * Room affiliations (XEP-0045 §9, §10): get_room_affiliation, get_room_affiliations and
 * set_room_affiliation, each in the API versions ejabberd has (24.12, API version 3, named the account
 * by user and host and the affiliation's holder by one JID). A change applies at once to the occupants
 * it concerns (a member-only room's outcast or a demoted member is kicked or loses its role) and is stored.
 */
import { badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import type { Affiliation } from '@service/mod_muc/api';
import { RENAME_NAME, ROOM_ERRORS, host, room, service, user } from '../args.js';
import type { MucAdminContext } from '../context.js';
import { mucCall } from '../errors.js';
import { accountJid, bareJidArg, existingRoom } from '../lookup.js';

const AFFILIATIONS: readonly Affiliation[] = ['owner', 'admin', 'member', 'outcast', 'none'];
const affiliationArg = { name: 'affiliation', type: 'string', desc: 'Affiliation to set: owner, admin, member, outcast or none', example: 'member' } as const;
const SET_DOC =
  'Sets the affiliation of the account in the room, as an owner would (XEP-0045 §9, §10): `none` removes it. Occupants of that account get their new role at once ' +
  '(an outcast is banned and leaves; in a members-only room, an account that is no longer a member leaves). The change is stored with the room. ' +
  `Fails with 400 naming the affiliation when it is not one of ${AFFILIATIONS.join(', ')}, or the account when it is not a valid JID; with 422 when the room's rules refuse it (removing its only owner). ${ROOM_ERRORS}`;

function affiliation(text: string): Affiliation {
  if (!(AFFILIATIONS as readonly string[]).includes(text)) throw badArgument('affiliation', `affiliation must be one of ${AFFILIATIONS.join(', ')}, got '${text}'`);
  return text as Affiliation;
}

export const affiliationCommands = [
  defineCommand({
    name: 'get_room_affiliation',
    tags: ['muc_room'],
    desc: 'Get affiliation of a user in MUC room',
    longdesc: `The affiliation of the JID (its bare JID counts) in the room: owner, admin, member, outcast, or none. ${ROOM_ERRORS} Fails with 400 when jid is not a valid JID.`,
    args: [room, service, { name: 'jid', type: 'string', desc: 'User JID', example: 'user1@example.com' }],
    argsRename: RENAME_NAME,
    result: { name: 'affiliation', type: 'string', desc: 'Affiliation of the user' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com', jid: 'user1@example.com' }, result: 'member' }],
  }),
  defineCommand({
    name: 'get_room_affiliations',
    tags: ['muc_room'],
    desc: 'Get the list of affiliations of a MUC room',
    longdesc: `API versions 0 to 2: each entry as the user name, its domain, the affiliation and the reason. ${ROOM_ERRORS}`,
    version: 0,
    args: [room, service],
    argsRename: RENAME_NAME,
    result: {
      name: 'affiliations',
      type: {
        list: {
          object: [
            { name: 'username', type: 'string' },
            { name: 'domain', type: 'string' },
            { name: 'affiliation', type: 'string' },
            { name: 'reason', type: 'string' },
          ],
        },
        item: 'affiliation',
      },
      desc: 'The list of affiliations with username, domain, affiliation and reason',
    },
    examples: [{ args: { room: 'room1', service: 'conference.example.com' }, result: [{ username: 'user1', domain: 'example.com', affiliation: 'member', reason: 'member' }] }],
  }),
  defineCommand({
    name: 'get_room_affiliations',
    tags: ['muc_room', 'v3'],
    desc: 'Get the list of affiliations of a MUC room',
    longdesc: `Every account (or server, for a server-wide ban) with an affiliation in the room other than none, with the reason given when it was set (empty when none was). ${ROOM_ERRORS}`,
    note: 'updated in 24.12',
    version: 3,
    args: [room, service],
    argsRename: RENAME_NAME,
    result: {
      name: 'affiliations',
      type: {
        list: {
          object: [
            { name: 'jid', type: 'string' },
            { name: 'affiliation', type: 'string' },
            { name: 'reason', type: 'string' },
          ],
        },
        item: 'affiliation',
      },
      desc: 'The list of affiliations with jid, affiliation and reason',
    },
    examples: [{ args: { room: 'room1', service: 'conference.example.com' }, result: [{ jid: 'user1@example.com', affiliation: 'member', reason: 'member' }] }],
  }),
  defineCommand({
    name: 'set_room_affiliation',
    tags: ['muc_room'],
    desc: 'Change an affiliation in a MUC room',
    longdesc: `API versions 0 to 2: the account as one JID. ${SET_DOC}`,
    version: 0,
    args: [{ name: 'name', type: 'string', desc: 'Room name', example: 'room1' }, service, { name: 'jid', type: 'string', desc: 'User JID', example: 'user2@example.com' }, affiliationArg],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { name: 'room1', service: 'conference.example.com', jid: 'user2@example.com', affiliation: 'member' }, result: 0 }],
  }),
  defineCommand({
    name: 'set_room_affiliation',
    tags: ['muc_room', 'v3'],
    desc: 'Change an affiliation in a MUC room',
    longdesc: SET_DOC,
    note: 'updated in 24.12',
    version: 3,
    args: [room, service, user, host, affiliationArg],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com', user: 'user2', host: 'example.com', affiliation: 'member' }, result: 0 }],
  }),
] as const;

export function affiliationHandlers(ctx: MucAdminContext): HandlersFor<typeof affiliationCommands> {
  const set = async (roomText: string, serviceText: string, jid: string, text: string, roomArgument: string) => {
    const value = affiliation(text);
    const ref = await existingRoom(ctx, roomText, serviceText, { room: roomArgument, service: 'service' });
    await mucCall(() => ctx.muc().setAffiliation(ref.room, ref.service, jid, value), 'affiliation');
  };
  const list = async (roomText: string, serviceText: string) => {
    const ref = await existingRoom(ctx, roomText, serviceText);
    return mucCall(() => ctx.muc().affiliations(ref.room, ref.service));
  };
  const versioned = {
    'get_room_affiliations@v0': async (args: { room: string; service: string }) =>
      (await list(args.room, args.service)).map((entry) => {
        const at = entry.jid.indexOf('@');
        return { username: at < 0 ? '' : entry.jid.slice(0, at), domain: at < 0 ? entry.jid : entry.jid.slice(at + 1), affiliation: entry.affiliation, reason: entry.reason };
      }),
    'get_room_affiliations@v3': async (args: { room: string; service: string }) =>
      (await list(args.room, args.service)).map((entry) => ({ jid: entry.jid, affiliation: entry.affiliation, reason: entry.reason })),
    'set_room_affiliation@v0': async (args: { name: string; service: string; jid: string; affiliation: string }) => {
      await set(args.name, args.service, bareJidArg('jid', args.jid), args.affiliation, 'name');
    },
    'set_room_affiliation@v3': async (args: { room: string; service: string; user: string; host: string; affiliation: string }) => {
      await set(args.room, args.service, accountJid(args.user, args.host), args.affiliation, 'room');
    },
  };
  const handlers: Pick<HandlersFor<typeof affiliationCommands>, 'get_room_affiliation'> = {
    get_room_affiliation: async (args) => {
      const jid = bareJidArg('jid', args.jid.includes('/') ? args.jid.slice(0, args.jid.indexOf('/')) : args.jid);
      const ref = await existingRoom(ctx, args.room, args.service);
      return mucCall(() => ctx.muc().affiliation(ref.room, ref.service, jid), 'jid');
    },
  };
  return { ...handlers, ...versioned } as unknown as HandlersFor<typeof affiliationCommands>;
}
