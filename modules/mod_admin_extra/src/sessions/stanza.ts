/**
 * Sending stanzas: send_message builds a message, send_stanza routes a given stanza between two JIDs,
 * send_stanza_c2s has a connected session send it as its client would. Routing is the kernel's (RFC
 * 6121), so what happens to a message then is what happens to any: offline storage for an account
 * without an available session (with mod_offline), privacy lists and blocking of the recipient, and so
 * on. What can be known before sending is checked first, so that a mistake is an error rather than a
 * bounce nobody reads: an invalid type or JID, a local account that does not exist, a session that is
 * not connected.
 */
import { badArgument, defineCommand, failed, notFound, randomId, x, type HandlersFor, type Jid, type XmlElement } from '@service/plugin-api';
import { host, user } from '../args.js';
import type { AdminContext } from '../context.js';
import { sendToRoom } from './stanza-groupchat.js';
import { checkBuiltSize, jidArg, stanzaArg } from './stanza-input.js';
import { connectedSession } from './target.js';

const MESSAGE_TYPES = ['normal', 'chat', 'headline', 'groupchat'] as const;

export const stanzaCommands = [
  defineCommand({
    name: 'send_message',
    tags: ['stanza'],
    desc: 'Send a message to a local or remote bare or full JID',
    longdesc:
      'Routes `<message type from to><subject/><body/></message>` as the server would route the same message from `from` (no client sends it, so the sender\'s own resources get no carbon copies). An empty subject is left out, and so is an empty body. ' +
      'To an account\'s bare JID it goes to its available resource(s) with the highest priority (headline: to all of them), or to offline storage; to a full JID, to that resource. ' +
      'A groupchat message to a room (room@service, with mod_muc) goes into the room on behalf of `from`, which must be the full JID of an occupant, the bare JID of a service admin, or the bare JID of a subscribed user (MUC/Sub): the occupants get it from `from`\'s nick; anyone else is refused with 400 naming `from` and nothing is sent; a room that does not exist is a 404. ' +
      'Otherwise (no multi-user chat service there), a groupchat message can only go to a connected resource (full JID) of a local account, which receives it as a groupchat message from `from`. ' +
      'Fails with 400 for another type, an invalid JID, a message to this server\'s own domain, a groupchat message to a bare JID, or neither subject nor body; with 404 when the recipient is a local account that does not exist, or (groupchat) a resource that is not connected. ' +
      'A recipient on a domain this server does not serve gets nothing (there is no server-to-server), and the error goes back to `from`.',
    note: 'for a groupchat message to a room, from must be the full JID of an occupant, or the bare JID of a service admin, or the bare JID of a subscribed user',
    args: [
      { name: 'type', type: 'string', desc: 'Message type: normal, chat, headline, groupchat', example: 'headline' },
      { name: 'from', type: 'string', desc: 'Sender JID', example: 'admin@localhost' },
      { name: 'to', type: 'string', desc: 'Receiver JID', example: 'user1@localhost' },
      { name: 'subject', type: 'string', desc: 'Subject, or empty string', example: 'Restart' },
      { name: 'body', type: 'string', desc: 'Body', example: 'In 5 minutes' },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { type: 'headline', from: 'admin@localhost', to: 'user1@localhost', subject: 'Restart', body: 'In 5 minutes' }, result: 0 }],
  }),
  defineCommand({
    name: 'send_stanza',
    tags: ['stanza'],
    desc: 'Send a stanza; provide From JID and valid To JID',
    longdesc:
      'Parses `stanza` with the parser client streams use, sets its `from` and `to` to the arguments (replacing those it has), and routes it as the server would route it from `from`. ' +
      '`stanza` must be one <message/>, <presence/> or <iq/> (in jabber:client, or without namespace) with a type that exists; an IQ needs an id. ' +
      'Fails with 400 when the stanza is not well-formed XML (the message names the problem) or not such a stanza, when a JID is invalid, for a message to this server\'s own domain or a groupchat message to a bare JID; ' +
      'with 404 when `to` is a local account that does not exist, or the full JID of a resource that is not connected for an IQ or a groupchat message.',
    args: [
      { name: 'from', type: 'string', desc: 'Sender JID', example: 'admin@localhost' },
      { name: 'to', type: 'string', desc: 'Destination JID', example: 'user1@localhost' },
      { name: 'stanza', type: 'string', desc: 'Stanza', example: "<message><ext attr='value'/></message>" },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { from: 'admin@localhost', to: 'user1@localhost', stanza: "<message><ext attr='value'/></message>" }, result: 0 }],
  }),
  defineCommand({
    name: 'send_stanza_c2s',
    tags: ['stanza'],
    desc: 'Send a stanza from an existing C2S session',
    longdesc:
      'The session `user@host/resource` sends `stanza` as if its client had: it is stamped with the session\'s full JID and handled like anything the client sends (a presence without `to` is its broadcast presence, a message goes through carbons and privacy lists, errors come back to the client). ' +
      '`stanza` must be one <message/>, <presence/> or <iq/> (in jabber:client, or without namespace) with a type that exists, an IQ with an id, and a `from`, if any, that is the session\'s JID. ' +
      'Fails with 400 for XML that is not well-formed (the message names the problem) or not such a stanza; with 404 when the account does not exist or has no session with that resource; with 422 when the session is waiting for its client to resume the stream (stream management). Nothing is sent when it fails.',
    note: 'the session must exist',
    args: [
      user,
      host,
      { name: 'resource', type: 'string', desc: 'Resource', example: 'bot' },
      { name: 'stanza', type: 'string', desc: 'Stanza', example: "<message to='user1@localhost'><ext attr='value'/></message>" },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'admin', host: 'myserver.com', resource: 'bot', stanza: "<message to='user1@localhost'><ext attr='value'/></message>" }, result: 0 }],
  }),
] as const;

export function stanzaHandlers(ctx: AdminContext): HandlersFor<typeof stanzaCommands> {
  const { xmpp, accounts } = ctx.services;

  /** What routing would refuse or lose for a local recipient, as an error now. */
  const checkRecipient = async (stanza: XmlElement, to: Jid, argument: string) => {
    if (!xmpp.router.isLocalHost(to.host)) return;
    const type = stanza.attr('type');
    if (to.user === undefined) {
      if (stanza.name === 'message' && type !== 'error') throw badArgument(argument, `${to.full} is this server, which takes no messages: address an account`);
      return;
    }
    if (!(await accounts.exists(to.user, to.host))) throw notFound(`account ${to.bare} does not exist`);
    const groupchat = stanza.name === 'message' && type === 'groupchat';
    if (groupchat && to.isBare) throw badArgument(argument, `a groupchat message to an account goes to one of its connected resources (a full JID), not to ${to.bare}`);
    const needsSession = groupchat || (stanza.name === 'iq' && (type === 'get' || type === 'set'));
    if (needsSession && !to.isBare) {
      const session = await xmpp.sessions.get(to.full);
      if (!session || session.closed) throw notFound(`${to.bare} has no session with resource '${to.resource}'`);
    }
  };

  return {
    send_message: async ({ type, from, to, subject, body }) => {
      if (!(MESSAGE_TYPES as readonly string[]).includes(type)) throw badArgument('type', `type must be one of ${MESSAGE_TYPES.join(', ')}, got '${type}'`);
      const sender = jidArg('from', from);
      const recipient = jidArg('to', to);
      if (subject === '' && body === '') throw badArgument('body', 'a message needs a subject or a body: both are empty');
      const message = x(
        'message',
        { type, from: sender.full, to: recipient.full, id: randomId(9) },
        subject ? x('subject', {}, subject) : undefined,
        body ? x('body', {}, body) : undefined,
      );
      checkBuiltSize('body', message);
      if (type === 'groupchat' && (await sendToRoom(ctx, message, sender, recipient))) return;
      await checkRecipient(message, recipient, 'to');
      await xmpp.router.route(message);
    },
    send_stanza: async ({ from, to, stanza }) => {
      const element = stanzaArg('stanza', stanza);
      const sender = jidArg('from', from);
      const recipient = jidArg('to', to);
      element.setAttr('from', sender.full).setAttr('to', recipient.full);
      await checkRecipient(element, recipient, 'to');
      await xmpp.router.route(element);
    },
    send_stanza_c2s: async ({ user: u, host: h, resource, stanza }) => {
      const element = stanzaArg('stanza', stanza);
      const session = await connectedSession(ctx, u, h, resource);
      const claimed = element.attr('from');
      if (claimed !== undefined && claimed !== session.jid.full && claimed !== session.jid.bare) {
        throw badArgument('stanza', `the stanza's from must be the session's JID (${session.jid.full}) or absent, got '${claimed}'`);
      }
      if (element.attr('to') !== undefined) jidArg('stanza', element.attr('to')!);
      if (!(await session.sendAsClient(element))) {
        throw failed(`${session.jid.full} has no connection now (stream management keeps it while its client reconnects): nothing was sent`);
      }
    },
  };
}
