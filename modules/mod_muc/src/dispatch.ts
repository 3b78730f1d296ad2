/**
 * Where a stanza to the conference domain goes: to the service itself (disco, nick registration, the
 * account's MUC/Sub subscriptions), to a room (groupchat, invitations, voice requests, muc#admin,
 * muc#owner, MUC/Sub, disco, the room's vCard, MAM queries of its archive) or to an occupant (presence:
 * join, change, leave; private messages); errors bounced by an occupant's client go to ghosts.ts, which
 * may remove that occupant. Each
 * stanza for a room runs under that room's lock; a handler's StanzaError is answered, anything else is
 * logged and answered with internal-server-error, so that no stanza can take the server down.
 */
import { Jid, StanzaError, x, type XmlElement } from '@service/plugin-api';
import { setRole } from './actions.js';
import { adminGet, adminSet, actorOf } from './admin-iq.js';
import { archiveIq, archiveOf } from './archive.js';
import { roomInfo, roomItems, serviceInfo, serviceItems } from './disco.js';
import { handleMucUserMessage } from './invitations.js';
import { relayIqAnswer, relayIqRequest } from './iq-relay.js';
import { handleOccupantPresence } from './join.js';
import { handleGroupchat, handlePrivateMessage, handleVoiceRequest, voiceApproval } from './messages.js';
import { subscriptionsElement } from './mucsub.js';
import { registerGet, registerSet } from './nick-registration.js';
import { formValue } from './config-form.js';
import { handleErrorFromOccupant } from './ghosts.js';
import { NS_DATA, NS_DISCO_INFO, NS_DISCO_ITEMS, NS_MAM, NS_MUC_ADMIN, NS_MUC_OWNER, NS_MUC_REQUEST, NS_MUC_USER, NS_MUCSUB, NS_REGISTER } from './ns.js';
import { ownerGet, ownerSet } from './owner-iq.js';
import type { RoomRegistry } from './registry.js';
import type { Room } from './room.js';
import { roomSubscriptionsIq, subscribeIq, unsubscribeIq } from './subscriptions.js';
import { NS_VCARD, vcardGet, vcardSet } from './vcard.js';

export async function dispatchStanza(registry: RoomRegistry, stanza: XmlElement, from: Jid, to: Jid): Promise<void> {
  try {
    if (to.user === undefined) {
      if (to.resource !== undefined) throw new StanzaError('service-unavailable');
      return await toService(registry, stanza, from, to.host);
    }
    const name = to.user;
    await registry.withRoom(name, to.host, async () => {
      try {
        const room = await registry.get(name, to.host);
        if (to.resource === undefined) await toRoom(registry, room, stanza, from);
        else await toOccupant(registry, room, stanza, from, name, to.host, to.resource);
      } catch (err) {
        await answerError(registry, stanza, err);
      }
    });
  } catch (err) {
    await answerError(registry, stanza, err);
  }
}

async function answerError(registry: RoomRegistry, stanza: XmlElement, err: unknown): Promise<void> {
  if (err instanceof StanzaError) return registry.env.bounce(stanza, err).catch(() => undefined);
  registry.env.logger.error({ err, stanza: stanza.name }, 'a MUC stanza failed');
  await registry.env.bounce(stanza, new StanzaError('internal-server-error')).catch(() => undefined);
}

async function reply(registry: RoomRegistry, stanza: XmlElement, payload?: XmlElement): Promise<void> {
  await registry.env.send(x('iq', { type: 'result', id: stanza.attr('id'), from: stanza.attr('to'), to: stanza.attr('from') }, payload));
}

function iqPayload(stanza: XmlElement): XmlElement {
  const payloads = stanza.elements();
  if (payloads.length !== 1) throw new StanzaError('bad-request', 'an IQ get or set carries exactly one payload element');
  return payloads[0]!;
}

async function toService(registry: RoomRegistry, stanza: XmlElement, from: Jid, service: string): Promise<void> {
  const env = registry.env;
  const type = stanza.attr('type');
  if (stanza.name === 'presence') return;
  if (stanza.name === 'message') {
    if (type !== 'error') throw new StanzaError('service-unavailable', 'the conference service takes no messages itself');
    return;
  }
  if (type !== 'get' && type !== 'set') return;
  const payload = iqPayload(stanza);
  if (type === 'get' && payload.is('query', NS_DISCO_INFO)) return reply(registry, stanza, serviceInfo(payload));
  if (type === 'get' && payload.is('query', NS_DISCO_ITEMS)) {
    if (payload.attr('node') !== undefined) throw new StanzaError('item-not-found', 'no such node');
    // Every stored room as storage has it (in a cluster, those of other nodes too), and this node's live ones.
    const rooms = (await registry.summaries(service, { unlockedOnly: true, everyStored: true })).filter((r) => r.public).sort((a, b) => a.room.localeCompare(b.room));
    return reply(registry, stanza, serviceItems(rooms.map((r) => ({ jid: r.jid, name: r.title || r.room })), env.settings.maxRoomsDiscoItems));
  }
  if (payload.is('query', NS_REGISTER)) {
    if (type === 'get') return reply(registry, stanza, await registerGet(env, service, from));
    await registerSet(env, service, from, payload);
    return reply(registry, stanza);
  }
  if (type === 'get' && payload.is('subscriptions', NS_MUCSUB)) {
    const mine = (await env.store.subscriptionsOf(from.bare)).filter((s) => s.service === service);
    const live = registry.live().filter((r) => r.service === service && !r.options.persistent && r.subscribers.has(from.bare));
    const all = [...mine.map((s) => ({ jid: `${s.room}@${service}`, nick: s.nick, nodes: s.nodes })), ...live.map((r) => ({ jid: r.jid.bare, nick: r.subscribers.get(from.bare)!.nick, nodes: r.subscribers.get(from.bare)!.nodes }))];
    return reply(registry, stanza, subscriptionsElement(all, true));
  }
  throw new StanzaError('service-unavailable');
}

async function toRoom(registry: RoomRegistry, room: Room | undefined, stanza: XmlElement, from: Jid): Promise<void> {
  const env = registry.env;
  const type = stanza.attr('type');
  if (stanza.name === 'presence') {
    if (type === 'error' && room) return expelOnError(registry, room, stanza, from, false);
    if (type !== 'error' && type !== 'unavailable') throw new StanzaError('jid-malformed', 'join a room as room@service/nick');
    return;
  }
  if (!room) {
    if (type === 'error' || type === 'result') return;
    throw new StanzaError('item-not-found', `there is no room ${stanza.attr('to') ?? ''}`);
  }
  if (stanza.name === 'message') {
    if (type === 'error') return expelOnError(registry, room, stanza, from, false);
    if (type === 'groupchat') return handleGroupchat(env, room, stanza, from);
    const mucUser = stanza.getChild('x', NS_MUC_USER);
    if (mucUser) return handleMucUserMessage(env, room, stanza, from, mucUser);
    const form = stanza.getChild('x', NS_DATA);
    if (form && formValue(form, 'FORM_TYPE') === NS_MUC_REQUEST) {
      const approval = form.attr('type') === 'submit' ? voiceApproval(form) : undefined;
      if (approval && formValue(form, 'muc#request_allow') !== undefined) return approveVoice(registry, room, from, approval);
      return handleVoiceRequest(env, room, stanza, from, form);
    }
    throw new StanzaError('bad-request', 'send groupchat messages to the room, private messages to an occupant');
  }
  if (type !== 'get' && type !== 'set') return;
  const payload = iqPayload(stanza);
  const isOwner = actorOf(env, room, from).affiliation === 'owner';
  if (room.locked && !isOwner) throw new StanzaError('item-not-found', 'the room is locked until its owner configures it');
  if (type === 'get' && payload.is('query', NS_DISCO_INFO)) {
    const nick = payload.attr('node') === 'x-roomuser-item' ? await env.store.registeredNick(room.service, from.bare) : undefined;
    return reply(registry, stanza, roomInfo(room, nick, payload, archiveOf(env, room) !== undefined));
  }
  if (payload.is('query', NS_MAM)) return reply(registry, stanza, await archiveIq(env, room, from, type, payload));
  if (type === 'get' && payload.is('query', NS_DISCO_ITEMS)) return reply(registry, stanza, roomItems(room, from));
  if (payload.is('query', NS_MUC_ADMIN)) {
    if (type === 'get') return reply(registry, stanza, await adminGet(env, room, from, payload));
    await adminSet(env, room, from, payload);
    await reply(registry, stanza);
    return registry.dropIfDone(room);
  }
  if (payload.is('query', NS_MUC_OWNER)) {
    if (type === 'get') return reply(registry, stanza, ownerGet(env, room, from));
    const gone = await ownerSet(env, room, from, payload);
    if (gone) registry.drop(room);
    return reply(registry, stanza);
  }
  if (type === 'set' && payload.is('subscribe', NS_MUCSUB)) return reply(registry, stanza, await subscribeIq(env, room, from, payload));
  if (type === 'set' && payload.is('unsubscribe', NS_MUCSUB)) {
    await unsubscribeIq(env, room, from, payload);
    await reply(registry, stanza);
    return registry.dropIfDone(room);
  }
  if (type === 'get' && payload.is('subscriptions', NS_MUCSUB)) return reply(registry, stanza, roomSubscriptionsIq(env, room, from));
  if (payload.is('vCard', NS_VCARD)) {
    if (type === 'get') return reply(registry, stanza, await vcardGet(env, room));
    await vcardSet(env, room, from, payload);
    return reply(registry, stanza);
  }
  // §7.10 registration with a room: ejabberd's rooms do not offer it (nicks are registered with the
  // service), and answer service-unavailable with this text; so do we.
  if (payload.is('query', NS_REGISTER)) throw new StanzaError('service-unavailable', 'The feature requested is not supported by the conference');
  throw new StanzaError('service-unavailable');
}

/** An error bounced by an occupant's client: the room may remove that session (ghosts.ts). */
async function expelOnError(registry: RoomRegistry, room: Room, stanza: XmlElement, from: Jid, toOccupant: boolean): Promise<void> {
  if (await handleErrorFromOccupant(registry.env, room, stanza, from, toOccupant)) registry.dropIfDone(room);
}

async function approveVoice(registry: RoomRegistry, room: Room, from: Jid, approval: { nick: string; allow: boolean }): Promise<void> {
  const actor = actorOf(registry.env, room, from);
  if (actor.role !== 'moderator') throw new StanzaError('forbidden', 'only moderators answer voice requests');
  if (!approval.allow) return;
  const occupant = room.occupantByNick(approval.nick);
  if (!occupant) throw new StanzaError('item-not-found', `there is no occupant '${approval.nick}' in this room`);
  if (occupant.role === 'visitor') await setRole(registry.env, room, occupant, 'participant', actor.nick);
}

async function toOccupant(registry: RoomRegistry, room: Room | undefined, stanza: XmlElement, from: Jid, name: string, service: string, nick: string): Promise<void> {
  const env = registry.env;
  if (stanza.name === 'presence' && stanza.attr('type') === 'error') {
    if (room) await expelOnError(registry, room, stanza, from, true);
    return;
  }
  if (stanza.name === 'presence') {
    const after = await handleOccupantPresence(env, room, stanza, from, nick, {
      createRoom: () => {
        if (!env.mayCreate(from.bare, env.settings.hostOf(service))) return undefined;
        const created = registry.create(name, service, { ...env.settings.defaultRoomOptions, presence_broadcast: [...env.settings.defaultRoomOptions.presence_broadcast] });
        created.locked = true;
        created.affiliations.set(from.bare, { affiliation: 'owner', reason: '' });
        return created;
      },
      conferencesOf: (bare) => registry.conferencesOf(bare),
      nickOwner: (n) => env.store.nickOwner(service, n),
    });
    registry.dropIfDone(after);
    return;
  }
  if (!room) {
    if (stanza.attr('type') === 'error' || stanza.attr('type') === 'result') return;
    throw new StanzaError('item-not-found', `there is no room ${name}@${service}`);
  }
  if (stanza.name === 'message') {
    if (stanza.attr('type') === 'error') return expelOnError(registry, room, stanza, from, true);
    return handlePrivateMessage(env, room, stanza, from, nick);
  }
  const type = stanza.attr('type');
  if (type === 'get' || type === 'set') return relayIqRequest(env, room, stanza, from, nick);
  if (type === 'result' || type === 'error') return relayIqAnswer(env, room, stanza, from);
}
