/**
 * Event notifications of a PEP node (XEP-0163 §4, XEP-0060 §7.1.2): to the owner's own available
 * sessions and to the available sessions of the contacts the node's access model lets see it, each only
 * when its client asked for `<node>+notify` in its entity capabilities (filtered notifications). They go
 * from the account's bare JID, as messages of the node's pubsub#notification_type, through the router, so
 * that the recipients' privacy lists and blocklists apply and sessions on other workers or nodes get them.
 * eventMessage builds the service's notifications too.
 */
import { Jid, x, type C2SSession, type RouterApi, type SessionDirectory, type XmlElement } from '@service/plugin-api';
import { contactRefusal, type RosterView } from './access.js';
import type { Capabilities } from './caps.js';
import type { NodeConfig } from './node-config.js';
import { NS_PUBSUB_EVENT } from './ns.js';

export interface NotifierDeps {
  readonly router: RouterApi;
  readonly sessions: SessionDirectory;
  readonly caps: Capabilities;
  readonly isLocalHost: (host: string) => boolean;
}

/**
 * The <event/> message from `from` (an account's bare JID, or a service) about a node configured so, with
 * `content` (items, a retract, a delete, a purge) and `extra` after the event (a <delay/>).
 */
export function eventMessage(from: string, config: NodeConfig, content: XmlElement, extra?: XmlElement): XmlElement {
  const id = `ps-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  return x('message', { from, type: config.notificationType, id }, x('event', { xmlns: NS_PUBSUB_EVENT }, content), extra);
}

export class Notifier {
  constructor(private readonly deps: NotifierDeps) {}

  /** Sends `message` to every session entitled to and interested in notifications of `node`. */
  async notify(owner: Jid, node: string, config: NodeConfig, message: XmlElement, roster: RosterView): Promise<void> {
    if (!config.deliverNotifications) return;
    const recipients = await this.recipients(owner, node, config, roster);
    if (recipients.length === 0) return;
    await this.deps.router.routeEach(message, recipients.map((s) => s.jid.full));
  }

  /** The sessions that get notifications of `node`: the owner's and its entitled contacts', with +notify. */
  async recipients(owner: Jid, node: string, config: NodeConfig, roster: RosterView): Promise<C2SSession[]> {
    const accounts = [owner.bare];
    if (config.accessModel !== 'whitelist' && config.accessModel !== 'authorize') {
      for (const item of await roster.presenceSubscribers(owner.bare)) {
        const contact = Jid.tryParse(item.jid);
        if (!contact || contact.user === undefined || !this.deps.isLocalHost(contact.host) || contactRefusal(config, item)) continue;
        accounts.push(contact.bare);
      }
    }
    const chosen: C2SSession[] = [];
    for (const account of accounts) {
      for (const session of await this.deps.sessions.byAccount(account)) {
        if (session.closed || !session.available) continue;
        if (await this.deps.caps.wantsNotify(session, node)) chosen.push(session);
      }
    }
    return chosen;
  }
}
