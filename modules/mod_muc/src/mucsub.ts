/**
 * ejabberd's MUC/Sub (urn:xmpp:mucsub:0): subscribing to a room's events without joining it, the
 * subscriptions queries, and the delivery of events — a room's messages, presence, subject, affiliation
 * and configuration changes, room-level system notices — wrapped in a pubsub event message to the
 * subscribers that are not occupants.
 */
import { Jid, StanzaError, x, type XmlElement } from '@service/plugin-api';
import type { MucEnv } from './context.js';
import { NS_MUCSUB, NS_PUBSUB_EVENT } from './ns.js';
import type { Room } from './room.js';
import { MUCSUB_NODES, type SubscriberInfo } from './types.js';

export type MucSubNode = (typeof MUCSUB_NODES)[number];
export const NODE = {
  presence: MUCSUB_NODES[0],
  messages: MUCSUB_NODES[1],
  affiliations: MUCSUB_NODES[2],
  subject: MUCSUB_NODES[3],
  config: MUCSUB_NODES[4],
  participants: MUCSUB_NODES[5],
  system: MUCSUB_NODES[6],
} as const;

let eventCounter = 0;

/** Sends an event to every subscriber of `node` that has no occupant in the room. */
export async function sendEvent(env: MucEnv, room: Room, node: MucSubNode, payload: XmlElement): Promise<void> {
  if (room.subscribers.size === 0) return;
  for (const subscriber of room.subscribers.values()) {
    if (!subscriber.nodes.includes(node)) continue;
    if (room.occupantsOf(subscriber.jid).length > 0) continue;
    const item = payload.clone();
    item.setAttr('to', subscriber.jid);
    const id = `${env.now().toString(36)}-${(eventCounter++).toString(36)}`;
    await env.send(
      x(
        'message',
        { from: room.jid.bare, to: subscriber.jid, id },
        x('event', { xmlns: NS_PUBSUB_EVENT }, x('items', { node }, x('item', { id }, item))),
      ),
    );
  }
}

/**
 * A room-level notice to the subscribers of the system node (urn:xmpp:mucsub:nodes:system): the room's
 * configuration status codes (104, 170-173), its destruction, its going away at shutdown (332). Occupants
 * get these as room messages or presences already; a subscriber that is not joined gets them here, as a
 * groupchat message from the room's bare JID carrying the muc#user payload.
 */
export async function systemNotice(env: MucEnv, room: Room, payload: XmlElement): Promise<void> {
  await sendEvent(env, room, NODE.system, x('message', { from: room.jid.bare, type: 'groupchat' }, payload));
}

/** The nodes a subscribe request names, each known one once; bad-request when none is known. */
export function requestedNodes(subscribe: XmlElement): string[] {
  const nodes: string[] = [];
  for (const event of subscribe.getChildren('event')) {
    const node = event.attr('node');
    if (node && (MUCSUB_NODES as readonly string[]).includes(node) && !nodes.includes(node)) nodes.push(node);
  }
  return nodes;
}

export function subscriptionsElement(subscribers: Iterable<SubscriberInfo>, withNodes: boolean): XmlElement {
  const out = x('subscriptions', { xmlns: NS_MUCSUB });
  for (const s of subscribers) {
    const sub = x('subscription', { jid: s.jid, nick: s.nick });
    if (withNodes) for (const node of s.nodes) sub.append(x('event', { node }));
    out.append(sub);
  }
  return out;
}

/** The subscribe request's target: the sender, or (for a moderator) the `jid` it names. */
export function subscribeTarget(subscribe: XmlElement, from: Jid): Jid {
  const named = subscribe.attr('jid');
  if (named === undefined) return from.toBare();
  const jid = Jid.tryParse(named);
  if (!jid) throw new StanzaError('jid-malformed', `'${named}' is not a valid JID`);
  return jid.toBare();
}
