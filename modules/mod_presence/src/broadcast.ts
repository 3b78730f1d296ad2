/**
 * Presence broadcast (RFC 6121 §4.2, §4.4, §4.5): a session's available presence goes to the contacts
 * subscribed to the account (from/both) and to the account's own available resources, the sender
 * included; its unavailable presence goes to the same, plus the entities it sent directed presence to.
 * Stanzas are routed, so that the recipients' deliver chains (blocking, privacy) apply.
 */
import type { C2SSession, Jid, Logger, XmlElement, XmppApi } from '@service/plugin-api';
import type { RosterApi, SubscriptionChange } from '@service/mod_roster/api';
import { presenceOf } from './session-presence.js';
import { addressed, unavailable } from './stanzas.js';

export class PresenceBroadcast {
  constructor(
    private readonly roster: RosterApi,
    private readonly xmpp: XmppApi,
    private readonly logger: Logger,
  ) {}

  /** An available broadcast presence (initial or update) from `session`. */
  async available(session: C2SSession, presence: XmlElement): Promise<void> {
    presenceOf(session).announced = true;
    for (const target of await this.#audience(session)) await this.#route(addressed(presence, session.jid, target));
  }

  /**
   * The session goes unavailable: by its own broadcast, because it ended, or because the account is
   * removed. Subscribers hear it only if they were told it was available; directed recipients always.
   */
  async unavailable(session: C2SSession, presence: XmlElement): Promise<void> {
    const state = presenceOf(session);
    const targets = new Map<string, Jid>();
    // Another node's session (a cluster's, ended by the node that cleans up after its dead node) was announced
    // there, not here: its availability says whether its subscribers were told.
    const announced = state.announced || (!this.xmpp.isLocal(session) && session.available);
    if (announced) for (const target of await this.#audience(session)) targets.set(target.full, target);
    for (const [full, recipient] of state.directed ?? []) {
      // A subscriber's bare JID already reaches every resource of it.
      if (!targets.has(recipient.bare)) targets.set(full, recipient);
    }
    state.announced = false;
    state.directed = undefined;
    for (const target of targets.values()) await this.#route(addressed(presence, session.jid, target));
  }

  /** The account's presence after a session ended: unavailable with its last status text. */
  async sessionEnded(session: C2SSession): Promise<void> {
    await this.unavailable(session, unavailable(session.jid, session.account, session.statusText));
  }

  /**
   * A contact started or stopped receiving the owner's presence (RFC 6121 §3.1.5, §3.2.2, §3.3.3): it gets
   * the current presence of each available resource, or their unavailable presence.
   */
  async subscriptionChanged(change: SubscriptionChange): Promise<void> {
    const wasSubscriber = receivesPresence(change.before.subscription);
    const isSubscriber = receivesPresence(change.after.subscription);
    if (wasSubscriber === isSubscriber) return;
    for (const session of await this.#availableSessions(change.owner)) {
      const stanza = isSubscriber ? addressed(session.presence, session.jid, change.contact) : unavailable(session.jid, change.contact);
      await this.#route(stanza);
    }
  }

  /** Directed presence (RFC 6121 §4.6): remembered, so that the recipient hears when the session goes away. */
  trackDirected(session: C2SSession, to: Jid, type: string | undefined): void {
    const state = presenceOf(session);
    if (type === undefined) (state.directed ??= new Map()).set(to.full, to);
    else state.directed?.delete(to.full);
  }

  /** The subscribers' bare JIDs and the account's own. */
  async #audience(session: C2SSession): Promise<Jid[]> {
    const subscribers = await this.roster.subscribers(session.account);
    return [...subscribers.filter((s) => s.bare !== session.account.bare), session.account];
  }

  async #availableSessions(account: Jid): Promise<C2SSession[]> {
    return (await this.xmpp.sessions.byAccount(account.bare)).filter((s) => s.available && !s.closed);
  }

  async #route(stanza: XmlElement): Promise<void> {
    try {
      await this.xmpp.router.route(stanza);
    } catch (err) {
      // One recipient's failure must not keep the others from hearing.
      this.logger.error({ err, to: stanza.attr('to') }, 'presence could not be routed');
    }
  }
}

function receivesPresence(subscription: string): boolean {
  return subscription === 'from' || subscription === 'both';
}
