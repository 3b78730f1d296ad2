/**
 * Nick registration on a conference service (XEP-0045 §7.10), over jabber:iq:register: the form with
 * muc#register_roomnick (filled with the account's nick when it has one), its submission, and <remove/>.
 * A registered nick is reserved: another account cannot enter a room of the service with it.
 */
import { StanzaError, x, type Jid, type XmlElement } from '@service/plugin-api';
import { formField, formValue } from './config-form.js';
import type { MucEnv } from './context.js';
import { NS_DATA, NS_MUC_REGISTER, NS_REGISTER } from './ns.js';
import { enforceNick } from './nick.js';
import { NickTaken } from './store.js';

export async function registerGet(env: MucEnv, service: string, from: Jid): Promise<XmlElement> {
  const nick = await env.store.registeredNick(service, from.bare);
  const query = x('query', { xmlns: NS_REGISTER });
  if (nick !== undefined) query.append(x('registered'), x('username', {}, nick));
  query.append(
    x('instructions', {}, 'Enter the nickname you want to register'),
    x('x', { xmlns: NS_DATA, type: 'form' }, x('title', {}, `Nickname registration at ${service}`), formField('FORM_TYPE', 'hidden', [NS_MUC_REGISTER]), formField('muc#register_roomnick', 'text-single', nick !== undefined ? [nick] : [], 'Nickname')),
  );
  return query;
}

export async function registerSet(env: MucEnv, service: string, from: Jid, query: XmlElement): Promise<void> {
  if (query.getChild('remove')) {
    if (!(await env.store.unregisterNick(service, from.bare))) throw new StanzaError('item-not-found', 'you have no registered nickname here');
    return;
  }
  const form = query.getChild('x', NS_DATA);
  const nick = form ? formValue(form, 'muc#register_roomnick') : query.getChildText('username');
  if (form?.attr('type') === 'cancel') return;
  if (nick === undefined || nick === '') throw new StanzaError('not-acceptable', 'muc#register_roomnick is required');
  const prepared = prepareNick(nick);
  if (prepared === undefined) throw new StanzaError('jid-malformed', `'${nick}' is not a valid nickname`);
  try {
    await env.store.registerNick(service, from.bare, prepared);
  } catch (err) {
    if (err instanceof NickTaken) throw new StanzaError('conflict', 'that nickname is registered by another person');
    throw err;
  }
}

/** A nick as rooms enforce it (nick.ts), so that a registered nick is the one its owner enters with. */
export function prepareNick(nick: string): string | undefined {
  return enforceNick(nick);
}
