/**
 * The muc#owner queries (XEP-0045 §10): the configuration form and its submission (which also unlocks a
 * new room: an empty submit form makes it an instant room, §10.1.2), cancelling the initial configuration,
 * and destroying the room with a reason and an alternate venue (§10.9).
 */
import { Jid, StanzaError, x, type XmlElement } from '@service/plugin-api';
import { actorOf } from './admin-iq.js';
import { applyOptions, destroyRoom, persistAll } from './actions.js';
import { applyConfigForm, configForm } from './config-form.js';
import type { MucEnv } from './context.js';
import { NS_DATA, NS_MUC_OWNER } from './ns.js';
import type { Room } from './room.js';
import type { RoomOptions } from './types.js';

export function ownerGet(env: MucEnv, room: Room, from: Jid): XmlElement {
  if (actorOf(env, room, from).affiliation !== 'owner') throw new StanzaError('forbidden', 'only owners configure the room');
  return x('query', { xmlns: NS_MUC_OWNER }, configForm(room.options, `Configuration of room ${room.jid.bare}`));
}

/** Resolves true when the room is gone after it (destroyed, cancelled, or no longer persistent and empty). */
export async function ownerSet(env: MucEnv, room: Room, from: Jid, query: XmlElement): Promise<boolean> {
  if (actorOf(env, room, from).affiliation !== 'owner') throw new StanzaError('forbidden', 'only owners configure or destroy the room');
  const destroy = query.getChild('destroy');
  if (destroy) {
    const alternateText = destroy.attr('jid');
    const alternate = alternateText !== undefined ? Jid.tryParse(alternateText) : undefined;
    if (alternateText !== undefined && !alternate) throw new StanzaError('jid-malformed', `'${alternateText}' is not a valid JID`);
    await destroyRoom(env, room, destroy.getChildText('reason'), alternate?.full);
    return true;
  }
  const form = query.getChild('x', NS_DATA);
  if (!form) throw new StanzaError('bad-request', 'send a data form or a destroy request');
  const type = form.attr('type');
  if (type === 'cancel') {
    if (!room.locked) return false;
    await destroyRoom(env, room);
    return true;
  }
  if (type !== 'submit') throw new StanzaError('bad-request', "the form's type must be submit or cancel");
  const options = applyConfigForm(room.options, form);
  checkOptions(env, room, from, options);
  const wasLocked = room.locked;
  room.locked = false;
  if (wasLocked && sameOptions(room.options, options)) {
    // The instant room (or a configuration that changes nothing): no change notice, just stored if persistent.
    if (options.persistent) await persistAll(env, room);
    return false;
  }
  const { destroyed } = await applyOptions(env, room, options);
  return destroyed;
}

/** What a submitted configuration may not do here. */
export function checkOptions(env: MucEnv, room: Room, from: Jid, options: RoomOptions): void {
  if (options.captcha_protected) throw new StanzaError('not-acceptable', 'this server has no CAPTCHA: captcha_protected cannot be enabled');
  if (options.persistent && !room.options.persistent && !env.mayMakePersistent(from.bare, room.host)) {
    throw new StanzaError('forbidden', 'you may not make rooms persistent');
  }
  if (options.password_protected && options.password === '') throw new StanzaError('not-acceptable', 'a password-protected room needs a password');
}

function sameOptions(a: RoomOptions, b: RoomOptions): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
