/**
 * Roster pushes (RFC 6121 §2.1.6) to an account's interested resources: the sessions that asked for the
 * roster. They go through `deliverToSession`, so that stream management counts and queues them.
 */
import { randomBytes } from 'node:crypto';
import { x, type C2SSession, type Jid, type SessionStateCarrier, type XmlElement, type XmppApi } from '@service/plugin-api';
import { rosterQuery } from './roster-xml.js';

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

  async interestedSessions(owner: Jid): Promise<C2SSession[]> {
    return (await this.xmpp.sessions.byAccount(owner.bare)).filter((s) => !s.closed && interestOf(s).interested);
  }

  /** Pushes one item (or its removal) with the roster version it produced. */
  async push(owner: Jid, item: XmlElement, version: string | undefined): Promise<void> {
    for (const session of await this.interestedSessions(owner)) {
      const push = x(
        'iq',
        { type: 'set', id: `push-${randomBytes(6).toString('hex')}`, to: session.jid.full },
        rosterQuery([item.clone()], interestOf(session).versioned ? version : undefined),
      );
      await this.xmpp.router.deliverToSession(session, push);
    }
  }
}
