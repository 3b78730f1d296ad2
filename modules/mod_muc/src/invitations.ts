/**
 * Invitations: mediated ones (XEP-0045 §7.8.2) relayed by the room from an occupant to the invitee
 * (making the invitee a member of a members-only room), declines relayed back to the inviter (§7.8.2's
 * decline), and direct invitations (XEP-0249) sent by the room itself for MucApi.inviteDirect.
 */
import { Jid, StanzaError, x, type XmlElement } from '@service/plugin-api';
import { setAffiliation } from './actions.js';
import type { MucEnv } from './context.js';
import { NS_CONFERENCE, NS_MUC_USER } from './ns.js';
import type { Room } from './room.js';

export async function handleMucUserMessage(env: MucEnv, room: Room, stanza: XmlElement, from: Jid, mucUser: XmlElement): Promise<void> {
  const invites = mucUser.getChildren('invite');
  const decline = mucUser.getChild('decline');
  if (invites.length) return invite(env, room, stanza, from, invites);
  if (decline) return relayDecline(env, room, stanza, from, decline);
  await env.bounce(stanza, new StanzaError('bad-request', 'a muc#user message to the room carries an invite or a decline'));
}

async function invite(env: MucEnv, room: Room, stanza: XmlElement, from: Jid, invites: XmlElement[]): Promise<void> {
  const inviter = room.occupantBySession(from.full);
  if (!inviter) {
    await env.bounce(stanza, new StanzaError('not-acceptable', 'only occupants may invite to this room'));
    return;
  }
  const affiliation = env.isServiceAdmin(from.bare, room.host) ? 'owner' : room.affiliationOf(from.bare);
  const privileged = affiliation === 'owner' || affiliation === 'admin' || inviter.role === 'moderator';
  if (!room.options.allow_user_invites && !privileged) {
    await env.bounce(stanza, new StanzaError('not-allowed', 'this room does not allow its occupants to invite'));
    return;
  }
  const targets: Jid[] = [];
  for (const element of invites) {
    const to = Jid.tryParse(element.attr('to'));
    if (!to) {
      await env.bounce(stanza, new StanzaError('jid-malformed', `'${element.attr('to') ?? ''}' is not a valid JID`));
      return;
    }
    targets.push(to);
  }
  for (const [i, to] of targets.entries()) {
    const reason = invites[i]!.getChildText('reason');
    if (room.options.members_only && room.affiliationOf(to.bare) === 'none') await setAffiliation(env, room, to.bare, 'member', inviter.nick);
    const body = `${from.bare} invites you to the room ${room.jid.bare}${reason ? ` (${reason})` : ''}`;
    await env.send(
      x(
        'message',
        { from: room.jid.bare, to: to.full, id: stanza.attr('id') },
        x(
          'x',
          { xmlns: NS_MUC_USER },
          x('invite', { from: from.full }, reason ? x('reason', {}, reason) : undefined),
          room.options.password_protected ? x('password', {}, room.options.password) : undefined,
        ),
        x('body', {}, body),
      ),
    );
  }
}

async function relayDecline(env: MucEnv, room: Room, stanza: XmlElement, from: Jid, decline: XmlElement): Promise<void> {
  const to = Jid.tryParse(decline.attr('to'));
  if (!to) {
    await env.bounce(stanza, new StanzaError('jid-malformed', 'a decline names the inviter in to'));
    return;
  }
  const reason = decline.getChildText('reason');
  await env.send(
    x('message', { from: room.jid.bare, to: to.full, id: stanza.attr('id') }, x('x', { xmlns: NS_MUC_USER }, x('decline', { from: from.bare }, reason ? x('reason', {}, reason) : undefined))),
  );
}

/** XEP-0249 from the room to each user. */
export async function sendDirectInvitations(env: MucEnv, room: Room, users: readonly Jid[], options: { password?: string; reason?: string }): Promise<void> {
  for (const user of users) {
    await env.send(
      x(
        'message',
        { from: room.jid.bare, to: user.full },
        x('x', { xmlns: NS_CONFERENCE, jid: room.jid.bare, password: options.password || undefined, reason: options.reason || undefined }),
        x('body', {}, `You are invited to the room ${room.jid.bare}${options.reason ? ` (${options.reason})` : ''}`),
      ),
    );
  }
}
