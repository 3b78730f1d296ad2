/**
 * privacy_set: a jabber:iq:privacy set applied to an account as if one of its clients had sent it,
 * through mod_privacy's service (the same requests code its IQ handler runs), so that the account's
 * connected resources get the list pushes a client's change would bring.
 */
import { StanzaError, badArgument, conflict, defineCommand, failed, notFound, type HandlersFor } from '@service/plugin-api';
import { privacyService } from '@service/mod_privacy/api';
import { host, user } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { xmlArg } from './stanza-input.js';
import { bareJid, mustExist } from './target.js';

const NS_PRIVACY = 'jabber:iq:privacy';

export const privacyCommands = [
  defineCommand({
    name: 'privacy_set',
    tags: ['stanza'],
    desc: 'Send an IQ set privacy stanza',
    longdesc:
      `Applies \`xmlquery\`, a \`<query xmlns='${NS_PRIVACY}'/>\` holding one <list/>, <default/> or <active/>, to the account as an IQ set from one of its clients would (XEP-0016): a list is created, replaced or (without items) removed, and the account's connected resources get the privacy list push; <default/> sets or (without name) declines the default list. ` +
      'There is no session, so <active/> is refused. Needs mod_privacy. ' +
      'Fails with 400 for XML that is not well-formed or not such a query, or a request XEP-0016 calls a bad request; with 404 when the account does not exist or a named list or roster group does not; with 409 when XEP-0016 refuses the change because a list is in use by a resource (removing the default list, or a list a session has active; the default itself can be changed or declined while the user is online, as in ejabberd); with 422 when mod_privacy is not enabled.',
    note: 'sends an IQ set privacy stanza',
    args: [
      user,
      host,
      {
        name: 'xmlquery',
        type: 'string',
        desc: 'Query XML element',
        example: "<query xmlns='jabber:iq:privacy'><list name='blocked-list'><item type='jid' value='bad@example.com' action='deny' order='1'/></list></query>",
      },
    ],
    result: { name: 'res', type: 'rescode' },
    examples: [
      {
        args: {
          user: 'user1',
          host: 'myserver.com',
          xmlquery: "<query xmlns='jabber:iq:privacy'><list name='blocked-list'><item type='jid' value='bad@example.com' action='deny' order='1'/></list></query>",
        },
        result: 0,
      },
    ],
  }),
] as const;

export function privacyHandlers(ctx: AdminContext): HandlersFor<typeof privacyCommands> {
  return {
    privacy_set: async ({ user: u, host: h, xmlquery }) => {
      const privacy = need(ctx, privacyService, 'privacy_set');
      const query = xmlArg('xmlquery', xmlquery);
      if (!query.is('query', NS_PRIVACY)) throw badArgument('xmlquery', `xmlquery must be a <query xmlns='${NS_PRIVACY}'/>, got <${query.name}${query.ns ? ` xmlns='${query.ns}'` : ''}>`);
      const bare = bareJid(ctx, u, h);
      await mustExist(ctx, bare);
      const at = bare.indexOf('@');
      try {
        await privacy.apply(bare.slice(0, at), bare.slice(at + 1), 'set', query);
      } catch (err) {
        if (err instanceof StanzaError) throw commandErrorOf(err);
        throw err;
      }
    },
  };
}

/** The error a client would get, as the command's error of the same meaning. */
function commandErrorOf(err: StanzaError) {
  const text = err.text ?? err.condition;
  switch (err.condition) {
    case 'bad-request':
    case 'not-acceptable':
    case 'jid-malformed':
      return badArgument('xmlquery', `xmlquery was refused (${err.condition}): ${text}`);
    case 'item-not-found':
      return notFound(text);
    case 'conflict':
      return conflict(text);
    default:
      return failed(`xmlquery was refused (${err.condition}): ${text}`);
  }
}
