/**
 * Presence when the blocklist changes (XEP-0191 §§3.3–3.4): a contact that is blocked gets unavailable
 * presence from each available resource of the account, one that is unblocked gets their current
 * presence — "only if the contact is allowed to receive presence notifications", i.e. subscribed to the
 * account's presence. With mod_roster that is its subscribers; without it there are no subscriptions to
 * consult, and the blocked user JIDs themselves are told (a contact who got directed presence would
 * otherwise keep seeing the account online).
 */
import { Jid, x, type C2SSession, type RouterApi, type SessionDirectory, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { isCovered } from './jid-match.js';

export class PresenceOnChange {
  /** Stanzas sent here on purpose to a contact the account now blocks: the delivery check lets them pass. */
  readonly #exempt = new WeakSet<XmlElement>();

  constructor(
    private readonly sessions: SessionDirectory,
    private readonly router: RouterApi,
    /** mod_roster's service while it runs (read at each use: it may stop). */
    private readonly roster: () => RosterApi | undefined,
  ) {}

  isExempt(stanza: XmlElement): boolean {
    return this.#exempt.has(stanza);
  }

  async blocked(account: Jid, jids: readonly string[]): Promise<void> {
    await this.#tell(account, jids, (session) => x('presence', { type: 'unavailable', from: session.jid.full }));
  }

  async unblocked(account: Jid, jids: readonly string[]): Promise<void> {
    await this.#tell(account, jids, (session) => {
      const presence = session.presence?.clone() ?? x('presence');
      return presence.setAttr('from', session.jid.full).setAttr('id', undefined);
    });
  }

  async #tell(account: Jid, jids: readonly string[], presenceOf: (session: C2SSession) => XmlElement): Promise<void> {
    const available = (await this.sessions.byAccount(account.bare)).filter((s) => s.available && !s.closed);
    if (!available.length || !jids.length) return;
    const contacts = await this.#contacts(account, jids);
    for (const contact of contacts) {
      for (const session of available) {
        const presence = presenceOf(session).setAttr('to', contact);
        this.#exempt.add(presence);
        await this.router.route(presence);
      }
    }
  }

  async #contacts(account: Jid, jids: readonly string[]): Promise<string[]> {
    const roster = this.roster();
    if (!roster) return jids.filter((jid) => Jid.tryParse(jid)?.user !== undefined);
    const changed = new Set(jids);
    const subscribers = await roster.subscribers(account);
    return subscribers.filter((contact) => isCovered(changed, contact)).map((contact) => contact.bare);
  }
}
