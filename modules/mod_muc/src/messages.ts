/**
 * Messages to a room and to its occupants (XEP-0045 §7.4-§7.5, §7.13, §8.1): groupchat from occupants
 * (visitors silenced in moderated rooms), subject changes, private messages between occupants, and voice
 * requests relayed to the moderators as the muc#request form.
 */
import { StanzaError, x, type Jid, type XmlElement } from '@service/plugin-api';
import { persistRoom } from './actions.js';
import { broadcastGroupchat } from './broadcast.js';
import { formField, formValue } from './config-form.js';
import type { MucEnv } from './context.js';
import { NS_DATA, NS_MUC_REQUEST, NS_MUC_USER } from './ns.js';
import type { Room } from './room.js';

/** A groupchat message to the room from one of its occupants' sessions. */
export async function handleGroupchat(env: MucEnv, room: Room, stanza: XmlElement, from: Jid): Promise<void> {
  const occupant = room.occupantBySession(from.full);
  if (!occupant) {
    await env.bounce(stanza, new StanzaError('not-acceptable', 'only occupants may send messages to this room'));
    return;
  }
  const subject = stanza.getChild('subject');
  if (subject && !stanza.getChild('body')) {
    const allowed = occupant.role === 'moderator' || (room.options.allow_change_subj && occupant.role === 'participant');
    if (!allowed) {
      await env.bounce(stanza, new StanzaError('forbidden', 'you may not change the subject of this room'));
      return;
    }
    room.subject = subject.text();
    room.subjectNick = occupant.nick;
    await broadcastGroupchat(env, room, occupant.nick, stanza, { keep: false });
    await persistRoom(env, room);
    return;
  }
  if (occupant.role === 'visitor' && room.options.moderated) {
    await env.bounce(stanza, new StanzaError('forbidden', 'visitors may not speak in this moderated room'));
    return;
  }
  if (occupant.role === 'none') {
    await env.bounce(stanza, new StanzaError('forbidden'));
    return;
  }
  await broadcastGroupchat(env, room, occupant.nick, stanza, { keep: true, sender: occupant.bare });
}

/** A message to room@service/nick: a private message to that occupant. */
export async function handlePrivateMessage(env: MucEnv, room: Room, stanza: XmlElement, from: Jid, nick: string): Promise<void> {
  const type = stanza.attr('type') ?? 'normal';
  if (type === 'error') return;
  if (type === 'groupchat') {
    await env.bounce(stanza, new StanzaError('bad-request', 'a groupchat message goes to the room, not to an occupant'));
    return;
  }
  const sender = room.occupantBySession(from.full);
  if (!sender) {
    await env.bounce(stanza, new StanzaError('not-acceptable', 'only occupants may send private messages in this room'));
    return;
  }
  if (!room.options.allow_private_messages) {
    await env.bounce(stanza, new StanzaError('forbidden', 'private messages are not allowed in this room'));
    return;
  }
  const target = room.occupantByNick(nick);
  if (!target) {
    await env.bounce(stanza, new StanzaError('item-not-found', `there is no occupant '${nick}' in this room`));
    return;
  }
  for (const session of target.sessions.values()) {
    const copy = stanza.clone();
    copy.attrs = { ...copy.attrs, from: `${room.jid.bare}/${sender.nick}`, to: session.jid.full };
    if (!copy.getChild('x', NS_MUC_USER)) copy.append(x('x', { xmlns: NS_MUC_USER }));
    await env.send(copy);
  }
}

/** §7.13: a visitor asks for voice; the moderators get the approval form. */
export async function handleVoiceRequest(env: MucEnv, room: Room, stanza: XmlElement, from: Jid, form: XmlElement): Promise<void> {
  const occupant = room.occupantBySession(from.full);
  if (!occupant) {
    await env.bounce(stanza, new StanzaError('not-acceptable', 'only occupants may request voice'));
    return;
  }
  if (formValue(form, 'muc#role') !== 'participant') {
    await env.bounce(stanza, new StanzaError('bad-request', 'a voice request asks for the role participant'));
    return;
  }
  if (!room.options.allow_voice_requests || !room.options.moderated || occupant.role !== 'visitor') {
    await env.bounce(stanza, new StanzaError('forbidden', 'voice requests are not allowed here'));
    return;
  }
  const now = env.now();
  if (occupant.lastVoiceRequest !== undefined && now - occupant.lastVoiceRequest < room.options.voice_request_min_interval * 1000) {
    await env.bounce(stanza, new StanzaError('resource-constraint', 'please wait before requesting voice again'));
    return;
  }
  occupant.lastVoiceRequest = now;
  const session = occupant.sessions.get(from.full);
  const approval = x(
    'x',
    { xmlns: NS_DATA, type: 'form' },
    x('title', {}, 'Voice request'),
    x('instructions', {}, 'To approve this request for voice, select the "Grant voice to this person?" checkbox and click OK.'),
    formField('FORM_TYPE', 'hidden', [NS_MUC_REQUEST]),
    formField('muc#role', 'list-single', ['participant'], 'Requested role'),
    formField('muc#jid', 'jid-single', [session?.jid.full ?? occupant.bare], 'User ID'),
    formField('muc#roomnick', 'text-single', [occupant.nick], 'Nickname'),
    formField('muc#request_allow', 'boolean', ['0'], 'Grant voice to this person?'),
  );
  for (const moderator of room.moderators()) {
    for (const s of moderator.sessions.values()) await env.send(x('message', { from: room.jid.bare, to: s.jid.full }, approval.clone()));
  }
}

/** A moderator's answer to a voice request: approve gives the named occupant the role participant. */
export function voiceApproval(form: XmlElement): { nick: string; allow: boolean } | undefined {
  const nick = formValue(form, 'muc#roomnick');
  const allow = formValue(form, 'muc#request_allow');
  if (nick === undefined) return undefined;
  return { nick, allow: allow === '1' || allow === 'true' };
}
