/**
 * MUC/Sub subscriptions of a room, as the urn:xmpp:mucsub:0 queries and MucApi change them: who may
 * subscribe (the room must allow it; bans, members-only, password and nick reservations apply as to a
 * join), storage of a persistent room's subscribers, and the participants event to other subscribers.
 */
import { Jid, StanzaError, x, type XmlElement } from '@service/plugin-api';
import { actorOf } from './admin-iq.js';
import type { MucEnv } from './context.js';
import { NODE, requestedNodes, sendEvent, subscribeTarget, subscriptionsElement } from './mucsub.js';
import { enforceNick, nickKey } from './nick.js';
import { NS_MUCSUB } from './ns.js';
import type { Room } from './room.js';
import type { SubscriberInfo } from './types.js';

/** Adds or updates a subscriber; the checks of a join apply unless `trusted` (an administrator's call). */
export async function addSubscriber(env: MucEnv, room: Room, subscriber: SubscriberInfo, checks: { password?: string; trusted: boolean }): Promise<void> {
  const affiliation = room.affiliationOf(subscriber.jid);
  if (!checks.trusted) {
    if (!room.options.allow_subscription) throw new StanzaError('not-allowed', 'this room does not allow subscriptions');
    if (affiliation === 'outcast') throw new StanzaError('forbidden', 'you are banned from this room');
    const admin = env.isServiceAdmin(subscriber.jid, room.host);
    if (room.options.members_only && affiliation === 'none' && !admin) throw new StanzaError('registration-required', 'this room is members-only');
    if (room.options.password_protected && !admin && affiliation !== 'owner' && checks.password !== room.options.password) {
      throw new StanzaError('not-authorized', 'a password is required to subscribe to this room');
    }
  }
  const holder = room.occupantByNick(subscriber.nick);
  if (holder && holder.bare !== subscriber.jid) throw new StanzaError('conflict', 'that nickname is in use in this room');
  for (const other of room.subscribers.values()) {
    // Nicks compare as rooms compare them (nick.ts): case-folded.
    if (other.jid !== subscriber.jid && nickKey(other.nick) === nickKey(subscriber.nick)) throw new StanzaError('conflict', 'that nickname is used by another subscriber');
  }
  const owner = await env.store.nickOwner(room.service, subscriber.nick);
  if (owner !== undefined && owner !== subscriber.jid) throw new StanzaError('conflict', 'that nickname is registered by another person');
  const isNew = !room.subscribers.has(subscriber.jid);
  room.subscribers.set(subscriber.jid, subscriber);
  if (room.options.persistent) await env.store.setSubscription(room.service, room.name, subscriber);
  if (isNew) await sendEvent(env, room, NODE.participants, x('message', { from: room.jid.bare }, x('subscribe', { xmlns: NS_MUCSUB, jid: room.options.anonymous ? undefined : subscriber.jid, nick: subscriber.nick })));
}

export async function removeSubscriber(env: MucEnv, room: Room, bare: string): Promise<boolean> {
  const subscriber = room.subscribers.get(bare);
  if (!subscriber) return false;
  room.subscribers.delete(bare);
  if (room.options.persistent) await env.store.removeSubscription(room.service, room.name, bare);
  await sendEvent(env, room, NODE.participants, x('message', { from: room.jid.bare }, x('unsubscribe', { xmlns: NS_MUCSUB, jid: room.options.anonymous ? undefined : bare, nick: subscriber.nick })));
  return true;
}

/** iq set <subscribe/> to the room. */
export async function subscribeIq(env: MucEnv, room: Room, from: Jid, subscribe: XmlElement): Promise<XmlElement> {
  const target = subscribeTarget(subscribe, from);
  const forOther = target.bare !== from.bare;
  if (forOther && actorOf(env, room, from).role !== 'moderator') throw new StanzaError('forbidden', 'only moderators subscribe others');
  const nickText = subscribe.attr('nick');
  const nick = nickText !== undefined ? enforceNick(nickText) : undefined;
  if (nickText === undefined || nickText === '') throw new StanzaError('bad-request', 'a subscription needs a nick');
  if (nick === undefined) throw new StanzaError('jid-malformed', `'${nickText}' is not a valid nickname`);
  const nodes = requestedNodes(subscribe);
  if (nodes.length === 0) throw new StanzaError('bad-request', 'subscribe to at least one known node');
  await addSubscriber(env, room, { jid: target.bare, nick, nodes }, { password: subscribe.attr('password') ?? subscribe.getChildText('password'), trusted: forOther });
  return x('subscribe', { xmlns: NS_MUCSUB, nick }, ...nodes.map((node) => x('event', { node })));
}

/** iq set <unsubscribe/> to the room. */
export async function unsubscribeIq(env: MucEnv, room: Room, from: Jid, unsubscribe: XmlElement): Promise<void> {
  const target = subscribeTarget(unsubscribe, from);
  if (target.bare !== from.bare && actorOf(env, room, from).role !== 'moderator') throw new StanzaError('forbidden', 'only moderators unsubscribe others');
  await removeSubscriber(env, room, target.bare);
}

/** iq get <subscriptions/> to the room: moderators see the subscribers. */
export function roomSubscriptionsIq(env: MucEnv, room: Room, from: Jid): XmlElement {
  if (actorOf(env, room, from).role !== 'moderator') throw new StanzaError('forbidden', 'only moderators list the subscribers');
  return subscriptionsElement(room.subscribers.values(), true);
}
