/**
 * MUC/Sub subscriptions (ejabberd's protocol: a subscriber gets the room's events on the nodes it chose
 * without being joined): subscribe_room, subscribe_room_many, unsubscribe_room (each in API version 0,
 * with JIDs in one text, and 3, with user and host), get_subscribers and get_user_subscriptions.
 * subscribe_room_many takes at most `subscribe_room_many_max_users` users (module option, 50 by default).
 */
import { badArgument, defineCommand, type HandlersFor } from '@service/plugin-api';
import { RENAME_NAME, ROOM_ERRORS, host, nodes, room, service, user } from '../args.js';
import type { MucAdminContext } from '../context.js';
import { mucCall } from '../errors.js';
import { accountJid, bareJidArg, existingRoom, nickArg, roomFromJid, type RoomRef } from '../lookup.js';
import { mucsubNode } from '../rooms/creation.js';

const nick = { name: 'nick', type: 'string', desc: 'A nick in the room', example: 'Tom' } as const;
const roomJid = { name: 'room', type: 'string', desc: 'Room JID (room@service)', example: 'room1@conference.localhost' } as const;
const nodesText = { name: 'nodes', type: 'string', desc: 'MUC/Sub nodes, separated by commas', example: 'urn:xmpp:mucsub:nodes:messages,urn:xmpp:mucsub:nodes:affiliations' } as const;

const SUBSCRIBE_DOC =
  "Subscribes the account to the room's events on the given MUC/Sub nodes (full names, `urn:xmpp:mucsub:nodes:messages`, or short ones, `messages`) under the nick, as its client would (the room must allow subscriptions, option allow_subscription); a subscription it had is replaced. " +
  'The subscription is stored with the room. Fails with 400 naming nodes when there is none or one is not a MUC/Sub node, with 409 when another account holds the nick in the room, with 422 when the room does not allow subscriptions. ';
const UNSUBSCRIBE_DOC = `Removes the account's MUC/Sub subscription to the room (its stored state too). Fails with 404 when the account is not subscribed. ${ROOM_ERRORS}`;

function nodeList(names: readonly string[]): string[] {
  if (names.length === 0) throw badArgument('nodes', 'nodes must name at least one MUC/Sub node, got none');
  return [...new Set(names.map((name) => mucsubNode(name, 'nodes')))];
}

function nodesFromText(text: string): string[] {
  return nodeList(
    text
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
}

const manyDoc =
  'Subscribes each listed account as subscribe_room does, at most `subscribe_room_many_max_users` users per call (a mod_muc_admin option, 50 by default): more is a 400 naming that limit, and nobody is subscribed. ' +
  'Every user and node is checked before anyone is subscribed (400 naming users or nodes, also for a user listed twice). ';

export const subscriptionCommands = [
  defineCommand({
    name: 'subscribe_room',
    tags: ['muc_room', 'muc_sub'],
    desc: 'Subscribe to a MUC conference',
    longdesc: `API versions 0 to 2: the account as a JID, the room as its JID, the nodes as one text separated by commas. ${SUBSCRIBE_DOC}${ROOM_ERRORS}`,
    version: 0,
    args: [{ name: 'user', type: 'string', desc: 'User JID', example: 'tom@localhost/dummy' }, nick, roomJid, nodesText],
    result: { name: 'nodes', type: { list: 'string', item: 'node' }, desc: 'The list of nodes that has subscribed' },
    examples: [
      {
        args: { user: 'tom@localhost/dummy', nick: 'Tom', room: 'room1@conference.localhost', nodes: 'urn:xmpp:mucsub:nodes:messages,urn:xmpp:mucsub:nodes:affiliations' },
        result: ['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:affiliations'],
      },
    ],
  }),
  defineCommand({
    name: 'subscribe_room',
    tags: ['muc_room', 'muc_sub', 'v3'],
    desc: 'Subscribe to a MUC conference',
    longdesc: SUBSCRIBE_DOC + ROOM_ERRORS,
    note: 'updated in 24.12',
    version: 3,
    args: [user, host, nick, room, service, nodes],
    result: { name: 'nodes', type: { list: 'string', item: 'node' }, desc: 'The list of nodes that has subscribed' },
    examples: [{ args: { user: 'tom', host: 'localhost', nick: 'Tom', room: 'room1', service: 'conference.localhost', nodes: nodes.example }, result: nodes.example }],
  }),
  defineCommand({
    name: 'subscribe_room_many',
    tags: ['muc_room', 'muc_sub'],
    desc: 'Subscribe several users to a MUC conference',
    longdesc: `API versions 0 to 2: each user as a JID and a nick, the room as its JID, the nodes as one text separated by commas. ${manyDoc}${SUBSCRIBE_DOC}${ROOM_ERRORS}`,
    version: 0,
    args: [
      {
        name: 'users',
        type: {
          list: {
            object: [
              { name: 'jid', type: 'string' },
              { name: 'nick', type: 'string' },
            ],
          },
          item: 'user',
        },
        desc: 'Users JIDs and nicks',
        example: [
          { jid: 'tom@localhost', nick: 'Tom' },
          { jid: 'jerry@localhost', nick: 'Jerry' },
        ],
      },
      roomJid,
      nodesText,
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [
      {
        args: {
          users: [
            { jid: 'tom@localhost', nick: 'Tom' },
            { jid: 'jerry@localhost', nick: 'Jerry' },
          ],
          room: 'room1@conference.localhost',
          nodes: 'urn:xmpp:mucsub:nodes:messages',
        },
        result: 0,
      },
    ],
  }),
  defineCommand({
    name: 'subscribe_room_many',
    tags: ['muc_room', 'muc_sub', 'v3'],
    desc: 'Subscribe several users to a MUC conference',
    longdesc: manyDoc + SUBSCRIBE_DOC + ROOM_ERRORS,
    note: 'updated in 24.12',
    version: 3,
    args: [
      {
        name: 'users',
        type: {
          list: {
            object: [
              { name: 'user', type: 'string' },
              { name: 'host', type: 'string' },
              { name: 'nick', type: 'string' },
            ],
          },
          item: 'user',
        },
        desc: 'List of tuples with users name, host and nick',
        example: [
          { user: 'tom', host: 'localhost', nick: 'Tom' },
          { user: 'jerry', host: 'localhost', nick: 'Jerry' },
        ],
      },
      room,
      service,
      nodes,
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [
      {
        args: {
          users: [
            { user: 'tom', host: 'localhost', nick: 'Tom' },
            { user: 'jerry', host: 'localhost', nick: 'Jerry' },
          ],
          room: 'room1',
          service: 'conference.localhost',
          nodes: nodes.example,
        },
        result: 0,
      },
    ],
  }),
  defineCommand({
    name: 'unsubscribe_room',
    tags: ['muc_room', 'muc_sub'],
    desc: 'Unsubscribe from a MUC conference',
    longdesc: `API versions 0 to 2: the account as a JID and the room as its JID. ${UNSUBSCRIBE_DOC}`,
    version: 0,
    args: [{ name: 'user', type: 'string', desc: 'User JID', example: 'tom@localhost' }, roomJid],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'tom@localhost', room: 'room1@conference.localhost' }, result: 0 }],
  }),
  defineCommand({
    name: 'unsubscribe_room',
    tags: ['muc_room', 'muc_sub', 'v3'],
    desc: 'Unsubscribe from a MUC conference',
    longdesc: UNSUBSCRIBE_DOC,
    note: 'updated in 24.12',
    version: 3,
    args: [user, host, room, service],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'tom', host: 'localhost', room: 'room1', service: 'conference.localhost' }, result: 0 }],
  }),
  defineCommand({
    name: 'get_subscribers',
    tags: ['muc_room', 'muc_sub'],
    desc: 'List subscribers of a MUC conference',
    longdesc: `The bare JIDs of the room's MUC/Sub subscribers. ${ROOM_ERRORS}`,
    args: [room, service],
    argsRename: RENAME_NAME,
    result: { name: 'subscribers', type: { list: 'string', item: 'jid' }, desc: 'The list of users that are subscribed to that room' },
    examples: [{ args: { room: 'room1', service: 'conference.example.com' }, result: ['user2@example.com', 'user3@example.com'] }],
  }),
  defineCommand({
    name: 'get_user_subscriptions',
    tags: ['muc', 'muc_sub'],
    desc: 'Get the list of rooms where this user is subscribed',
    longdesc:
      "The account's MUC/Sub subscriptions, on every MUC service: the room JID, the nick and the nodes. Empty for an account with none. Fails with 400 when user or host is not a valid JID part.",
    note: 'added in 21.04',
    args: [user, host],
    result: {
      name: 'rooms',
      type: {
        list: {
          object: [
            { name: 'roomjid', type: 'string' },
            { name: 'usernick', type: 'string' },
            { name: 'nodes', type: { list: 'string', item: 'node' } },
          ],
        },
        item: 'room',
      },
      desc: 'The list of rooms with the nick and nodes',
    },
    examples: [{ args: { user: 'tom', host: 'example.com' }, result: [{ roomjid: 'room1@conference.example.com', usernick: 'Tommy', nodes: ['urn:xmpp:mucsub:nodes:config'] }] }],
  }),
] as const;

export type SubscriptionCommands = typeof subscriptionCommands;

export function subscriptionHandlers(ctx: MucAdminContext): HandlersFor<SubscriptionCommands> {
  const subscribe = async (ref: RoomRef, jid: string, nickname: string, nodeNames: string[]) => {
    const checked = nickArg(nickname);
    return mucCall(() => ctx.muc().subscribe(ref.room, ref.service, jid, checked, nodeNames), 'nodes');
  };
  const many = async (users: Array<{ jid: string; nick: string }>, ref: RoomRef, nodeNames: string[]) => {
    const max = ctx.options.subscribe_room_many_max_users;
    if (users.length > max) throw badArgument('users', `subscribe_room_many takes at most ${max} users per call (subscribe_room_many_max_users), got ${users.length}`);
    if (users.length === 0) throw badArgument('users', 'users must name at least one user, got none');
    const seen = new Set<string>();
    for (const entry of users) {
      if (seen.has(entry.jid)) throw badArgument('users', `${entry.jid} is listed twice`);
      seen.add(entry.jid);
      nickArg(entry.nick, 'users');
    }
    await existingRoom(ctx, ref.room, ref.service);
    for (const entry of users) await mucCall(() => ctx.muc().subscribe(ref.room, ref.service, entry.jid, nickArg(entry.nick, 'users'), nodeNames), 'users');
  };
  const unsubscribe = async (ref: RoomRef, jid: string) => {
    await existingRoom(ctx, ref.room, ref.service);
    await mucCall(() => ctx.muc().unsubscribe(ref.room, ref.service, jid), 'user');
  };
  const versioned = {
    'subscribe_room@v0': async (args: { user: string; nick: string; room: string; nodes: string }) => {
      const jid = bareJidArg('user', args.user.includes('/') ? args.user.slice(0, args.user.indexOf('/')) : args.user);
      const nodeNames = nodesFromText(args.nodes);
      const ref = roomFromJid(ctx, args.room, 'room');
      await existingRoom(ctx, ref.room, ref.service, { room: 'room', service: 'room' });
      return subscribe(ref, jid, args.nick, nodeNames);
    },
    'subscribe_room@v3': async (args: { user: string; host: string; nick: string; room: string; service: string; nodes: string[] }) => {
      const jid = accountJid(args.user, args.host);
      const nodeNames = nodeList(args.nodes);
      const ref = await existingRoom(ctx, args.room, args.service);
      return subscribe(ref, jid, args.nick, nodeNames);
    },
    'subscribe_room_many@v0': async (args: { users: Array<{ jid: string; nick: string }>; room: string; nodes: string }) => {
      const users = args.users.map((entry) => ({ jid: bareJidArg('users', entry.jid), nick: entry.nick }));
      await many(users, roomFromJid(ctx, args.room, 'room'), nodesFromText(args.nodes));
    },
    'subscribe_room_many@v3': async (args: { users: Array<{ user: string; host: string; nick: string }>; room: string; service: string; nodes: string[] }) => {
      const max = ctx.options.subscribe_room_many_max_users;
      if (args.users.length > max) throw badArgument('users', `subscribe_room_many takes at most ${max} users per call (subscribe_room_many_max_users), got ${args.users.length}`);
      const users = args.users.map((entry) => ({ jid: accountJid(entry.user, entry.host, { user: 'users', host: 'users' }), nick: entry.nick }));
      const nodeNames = nodeList(args.nodes);
      const ref = await existingRoom(ctx, args.room, args.service);
      await many(users, ref, nodeNames);
    },
    'unsubscribe_room@v0': async (args: { user: string; room: string }) => {
      await unsubscribe(roomFromJid(ctx, args.room, 'room'), bareJidArg('user', args.user.includes('/') ? args.user.slice(0, args.user.indexOf('/')) : args.user));
    },
    'unsubscribe_room@v3': async (args: { user: string; host: string; room: string; service: string }) => {
      const jid = accountJid(args.user, args.host);
      const ref = await existingRoom(ctx, args.room, args.service);
      await unsubscribe(ref, jid);
    },
  };
  const handlers: Pick<HandlersFor<SubscriptionCommands>, 'get_subscribers' | 'get_user_subscriptions'> = {
    get_subscribers: async (args) => {
      const ref = await existingRoom(ctx, args.room, args.service);
      return (await mucCall(() => ctx.muc().subscribers(ref.room, ref.service))).map((subscriber) => subscriber.jid);
    },
    get_user_subscriptions: async (args) => {
      const jid = accountJid(args.user, args.host);
      const subscriptions = await mucCall(() => ctx.muc().userSubscriptions(jid));
      return subscriptions.map((entry) => ({ roomjid: entry.room, usernick: entry.nick, nodes: entry.nodes }));
    },
  };
  return { ...handlers, ...versioned } as unknown as HandlersFor<SubscriptionCommands>;
}
