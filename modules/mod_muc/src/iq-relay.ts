/**
 * IQs between occupants (XEP-0045 §7.5's "IQ to an occupant", used for vCards, pings, versions): a
 * request to room@service/nick from an occupant goes to one session of that occupant, from the
 * requester's occupant JID and under a fresh id; the answer comes back to the requester's session with the
 * original id. allow_query_users decides whether occupants may query each other.
 */
import { StanzaError, type Jid, type XmlElement } from '@service/plugin-api';
import type { MucEnv } from './context.js';
import type { Room } from './room.js';

/** Unanswered relayed requests a room remembers at most; the oldest is forgotten first. */
const MAX_PENDING = 1000;
let relayCounter = 0;

export async function relayIqRequest(env: MucEnv, room: Room, stanza: XmlElement, from: Jid, nick: string): Promise<void> {
  const requester = room.occupantBySession(from.full);
  if (!requester) throw new StanzaError('not-acceptable', 'only occupants may query occupants');
  if (!room.options.allow_query_users && requester.role !== 'moderator') throw new StanzaError('not-allowed', 'this room does not let occupants query each other');
  const target = room.occupantByNick(nick);
  const session = target ? [...target.sessions.values()][0] : undefined;
  if (!target || !session) throw new StanzaError('item-not-found', `there is no occupant '${nick}' in this room`);
  const id = `muc-relay-${(relayCounter++).toString(36)}`;
  room.relayedIqs.set(id, { requester: from.full, id: stanza.attr('id') ?? '', targetNick: nick });
  if (room.relayedIqs.size > MAX_PENDING) room.relayedIqs.delete(room.relayedIqs.keys().next().value!);
  const copy = stanza.clone();
  copy.attrs = { ...copy.attrs, id, from: `${room.jid.bare}/${requester.nick}`, to: session.jid.full };
  await env.send(copy);
}

/** An answer (result or error) to a relayed request, sent by the queried occupant to the requester's occupant JID. */
export async function relayIqAnswer(env: MucEnv, room: Room, stanza: XmlElement, from: Jid): Promise<void> {
  const pending = room.relayedIqs.get(stanza.attr('id') ?? '');
  if (!pending) return;
  const target = room.occupantByNick(pending.targetNick);
  if (!target?.sessions.has(from.full)) return;
  room.relayedIqs.delete(stanza.attr('id')!);
  const copy = stanza.clone();
  copy.attrs = { ...copy.attrs, id: pending.id, from: `${room.jid.bare}/${pending.targetNick}`, to: pending.requester };
  await env.send(copy);
}
