/**
 * Presence probes (RFC 6121 §4.3): at initial presence the server asks the contacts the account is
 * subscribed to for their presence, and answers the probes that arrive for its local accounts. Probes are
 * the server's business: they are never delivered to clients.
 */
import type { C2SSession, DeliverContext, Jid, Logger, Middleware, XmlElement, XmppApi } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { addressed, probe, unavailable } from './stanzas.js';

export class Probes {
  constructor(
    private readonly roster: RosterApi,
    private readonly xmpp: XmppApi,
    private readonly logger: Logger,
  ) {}

  /**
   * c2s_initial_presence: probes to the contacts with subscription to/both, from the session's full JID
   * so that the answers come to it; the account's other available resources are known here and sent
   * directly.
   */
  async sendProbes(session: C2SSession): Promise<void> {
    for (const contact of await this.roster.subscriptions(session.account)) {
      if (contact.bare === session.account.bare) continue;
      await this.#route(probe(session.jid, contact));
    }
    for (const other of await this.xmpp.sessions.byAccount(session.account.bare)) {
      if (other === session || !other.available || other.closed) continue;
      await this.xmpp.router.deliverToSession(session, addressed(other.presence, other.jid, session.jid));
    }
  }

  /** deliver: answers a probe for a local account, or ignores it when the prober is not subscribed. */
  answer(): Middleware<DeliverContext> {
    // Not async itself: every stanza delivered crosses this layer, and few are probes.
    return (ctx, next) => (ctx.stanza.name === 'presence' && ctx.stanza.attr('type') === 'probe' ? this.#answer(ctx) : next());
  }

  async #answer(ctx: DeliverContext): Promise<void> {
    const owner = ctx.to.toBare();
    const prober = ctx.from;
    // RFC 6121 §4.3.2: no presence for someone not subscribed, and no error either.
    if (!(await this.#mayProbe(owner, prober))) return;
    const sessions = (await this.xmpp.sessions.byAccount(owner.bare)).filter(
      (s) => s.available && !s.closed && (ctx.to.isBare || s.jid.full === ctx.to.full) && s.jid.full !== prober.full,
    );
    if (!sessions.length) {
      await this.#route(unavailable(owner, prober));
      return;
    }
    for (const session of sessions) await this.#route(addressed(session.presence, session.jid, prober));
  }

  async #mayProbe(owner: Jid, prober: Jid): Promise<boolean> {
    if (owner.bare === prober.bare) return true;
    const item = await this.roster.getItem(owner, prober.toBare());
    return item?.subscription === 'from' || item?.subscription === 'both';
  }

  async #route(stanza: XmlElement): Promise<void> {
    try {
      await this.xmpp.router.route(stanza);
    } catch (err) {
      this.logger.error({ err, to: stanza.attr('to') }, 'a probe or its answer could not be routed');
    }
  }
}
