/**
 * Presence as PEP sees it (XEP-0163 §4.3): a client's available presence announces its entity
 * capabilities, which are learned (caps.ts); once they are known, the session gets the last item of each
 * node it wants `+notify` of, among its own account's nodes and those of the contacts whose presence it
 * receives — once per session and node: a later presence sends only what new capabilities newly ask for
 * (a client that enables a plugin, or announces its full caps after a first presence). A subscription
 * newly granted sends the owner's last items to the contact's sessions at once. The answer to the
 * capabilities query comes back through user_send too and is taken here before routing.
 */
import { Jid, x, type C2SSession, type Logger, type Middleware, type RouterApi, type SendContext, type SessionDirectory } from '@service/plugin-api';
import type { SubscriptionChange } from '@service/mod_roster/api';
import { accessRefusal, type RosterView } from './access.js';
import type { Capabilities } from './caps.js';
import { eventMessage } from './notifications.js';
import { expiry } from './pep.js';
import type { PubsubStore } from './store.js';

/** The +notify features a session's last items were sent for. */
const SENT_KEY = 'mod_pubsub.last_items_for';

export interface LastItemsDeps {
  readonly caps: Capabilities;
  readonly store: PubsubStore;
  readonly router: RouterApi;
  readonly sessions: SessionDirectory;
  readonly roster: () => RosterView;
  readonly logger: Logger;
  readonly now: () => number;
  readonly isLocalHost: (host: string) => boolean;
}

export class LastItems {
  constructor(private readonly deps: LastItemsDeps) {}

  /**
   * The user_send layer: takes capabilities answers, and follows available presence broadcasts. Every other
   * stanza (each chat message) passes without an async frame.
   */
  readonly layer: Middleware<SendContext> = (c, next) => {
    if (this.deps.caps.takeAnswer(c.session, c.stanza)) return;
    const { stanza } = c;
    if (stanza.name !== 'presence' || c.to !== undefined || stanza.attr('type') !== undefined) return next();
    return this.#afterBroadcast(c, next);
  };

  async #afterBroadcast(c: SendContext, next: () => Promise<void>): Promise<void> {
    await next();
    const { session } = c;
    void this.#available(session).catch((err: unknown) => this.deps.logger.warn({ err, jid: session.jid.full }, 'could not send the last PEP items'));
  }

  async #available(session: C2SSession): Promise<void> {
    const features = await this.deps.caps.learn(session);
    if (!features || session.closed) return;
    const sent = session.state(SENT_KEY, () => ({ notify: new Set<string>() }));
    const wanted = new Set([...notifyOf(features)].filter((f) => !sent.notify.has(f)));
    if (wanted.size === 0) return;
    for (const feature of wanted) sent.notify.add(feature);
    await this.send(session, wanted);
  }

  /**
   * A roster change that lets a contact see the owner's presence (subscription 'from' or 'both' newly
   * granted): the contact's available sessions get the last items of the owner's nodes they want, as if
   * they had just come online (XEP-0163 §4.3.2), without waiting for their next login.
   */
  async subscriptionChanged(change: SubscriptionChange): Promise<void> {
    const sees = (s: SubscriptionChange['after']) => s.subscription === 'from' || s.subscription === 'both';
    if (!sees(change.after) || sees(change.before) || !this.deps.isLocalHost(change.contact.host) || change.contact.user === undefined) return;
    const roster = this.deps.roster();
    for (const session of await this.deps.sessions.byAccount(change.contact.bare)) {
      if (session.closed || !session.available) continue;
      const features = await this.deps.caps.featuresOf(session);
      if (features) await this.#sendFrom(session, [change.owner.bare], notifyOf(features), roster);
    }
  }

  /** Sends the session the last item of every node it wants (`<node>+notify` in `wanted`) and may see. */
  async send(session: C2SSession, wanted: ReadonlySet<string>): Promise<void> {
    const roster = this.deps.roster();
    const account = session.account;
    const owners = [account.bare];
    for (const item of await roster.presenceSources(account.bare)) {
      const contact = Jid.tryParse(item.jid);
      if (contact?.user !== undefined && this.deps.isLocalHost(contact.host)) owners.push(contact.bare);
    }
    await this.#sendFrom(session, owners, wanted, roster);
  }

  async #sendFrom(session: C2SSession, owners: readonly string[], wanted: ReadonlySet<string>, roster: RosterView): Promise<void> {
    const account = session.account;
    const now = this.deps.now();
    for (const node of await this.deps.store.nodesOf(owners)) {
      const { config } = node;
      if (!wanted.has(`${node.node}+notify`) || config.sendLastPublishedItem === 'never' || !config.deliverNotifications) continue;
      const owner = Jid.parse(node.service);
      if (await accessRefusal(config, owner, account, roster)) continue;
      const [last] = await this.deps.store.items(node.id, { max: 1, expireBefore: expiry(config, now) });
      if (!last || session.closed) continue;
      const shown = config.deliverPayloads ? last.item.clone() : x('item', { id: last.itemId });
      const delay = x('delay', { xmlns: 'urn:xmpp:delay', from: owner.bare, stamp: new Date(last.updatedAt).toISOString() });
      const message = eventMessage(owner.bare, config, x('items', { node: node.node }, shown), delay);
      message.setAttr('to', session.jid.full);
      await this.deps.router.route(message);
    }
  }
}

/** The `+notify` features among a client's features. */
function notifyOf(features: ReadonlySet<string>): Set<string> {
  return new Set([...features].filter((f) => f.endsWith('+notify')));
}
