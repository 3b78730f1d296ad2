/**
 * Roster pushes (RFC 6121 §2.1.6) to an account's interested resources: the sessions that asked for the
 * roster. They go through `deliverToSession`, so that stream management counts and queues them.
 *
 * Whether a session asked is known where it is carried: a change made on another worker or node (a contact's
 * subscription handled there) pushes to every session it carries, with the version, and `pushFilter`, in
 * user_receive where the session is, keeps what its client asked for.
 */
import { randomBytes } from 'node:crypto';
import { x, type C2SSession, type Jid, type Middleware, type ReceiveContext, type SessionStateCarrier, type XmlElement, type XmppApi } from '@service/plugin-api';
import { NS_ROSTER, rosterQuery } from './roster-xml.js';

interface RosterInterest {
  /** The session asked for the roster: it gets pushes. */
  interested: boolean;
  /** It sent a `ver` (XEP-0237): results and pushes carry the version. */
  versioned: boolean;
}

const STATE_KEY = 'mod_roster';

export function interestOf(session: C2SSession): RosterInterest {
  return session.state<RosterInterest>(STATE_KEY, () => ({ interested: false, versioned: false }));
}

/** Records a roster get: from now on the session gets pushes (with versions if it used them). */
export function markInterested(session: C2SSession, versioned: boolean): void {
  const interest = interestOf(session);
  interest.interested = true;
  interest.versioned ||= versioned;
}

/** An interested session still gets pushes after it moved to another node (a resumption there). */
export const rosterInterestCarrier: SessionStateCarrier = {
  key: STATE_KEY,
  save: (session) => {
    const interest = session.peekState<RosterInterest>(STATE_KEY);
    return interest?.interested ? { versioned: interest.versioned } : undefined;
  },
  restore: (session, saved) => {
    const versioned = typeof saved === 'object' && saved !== null && !Array.isArray(saved) && saved.versioned === true;
    markInterested(session, versioned);
  },
};

export class RosterPushes {
  constructor(private readonly xmpp: XmppApi) {}

  /** The sessions here that asked for the roster, and every session another worker or node carries. */
  async interestedSessions(owner: Jid): Promise<C2SSession[]> {
    return (await this.xmpp.sessions.byAccount(owner.bare)).filter((s) => !s.closed && (s.remote === true || interestOf(s).interested));
  }

  /** Pushes one item (or its removal) with the roster version it produced. */
  async push(owner: Jid, item: XmlElement, version: string | undefined): Promise<void> {
    for (const session of await this.interestedSessions(owner)) {
      const push = x(
        'iq',
        { type: 'set', id: `push-${randomBytes(6).toString('hex')}`, to: session.jid.full },
        rosterQuery([item.clone()], session.remote === true || interestOf(session).versioned ? version : undefined),
      );
      await this.xmpp.router.deliverToSession(session, push);
    }
  }
}

/**
 * user_receive, where the session is carried: a roster push (an iq set of jabber:iq:roster from the server,
 * without `from`) reaches a session only if its client asked for the roster, and carries the version only if
 * it used versions. Pushes made here were chosen so already; those made elsewhere are chosen now.
 */
export const pushFilter: Middleware<ReceiveContext> = (ctx, next) => {
  const { stanza, session } = ctx;
  if (stanza.name === 'iq' && stanza.attr('type') === 'set' && stanza.attr('from') === undefined) {
    const query = stanza.getChild('query', NS_ROSTER);
    if (query) {
      const interest = session.peekState<RosterInterest>(STATE_KEY);
      if (!interest?.interested) return;
      if (!interest.versioned) query.setAttr('ver', undefined);
    }
  }
  return next();
};
