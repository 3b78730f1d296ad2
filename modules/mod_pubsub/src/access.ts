/**
 * Who may see a PEP node's items and notifications (XEP-0060 §4.5 access models as XEP-0163 applies them
 * to an account's nodes): the account itself always; `open` anyone; `presence` contacts the account
 * grants a presence subscription to ('from' or 'both'); `roster` contacts in one of the node's allowed
 * roster groups; `whitelist` and `authorize` nobody else (on PEP, only the owner is affiliated). The
 * refusals carry the pubsub conditions of XEP-0060 §6.5.
 */
import { StanzaError, type Jid } from '@service/plugin-api';
import type { RosterApi, RosterItem } from '@service/mod_roster/api';
import { pubsubError } from './errors.js';
import type { NodeConfig } from './node-config.js';

/** Roster items looked up once per owner while one request is served (a publish's fan-out, a login). */
export class RosterView {
  readonly #items = new Map<string, Promise<RosterItem | undefined>>();

  constructor(private readonly roster: RosterApi | undefined) {}

  item(owner: string, contact: string): Promise<RosterItem | undefined> {
    if (!this.roster) return Promise.resolve(undefined);
    const key = `${owner}\u0000${contact}`;
    let found = this.#items.get(key);
    if (!found) {
      found = this.roster.getItem(owner, contact);
      this.#items.set(key, found);
    }
    return found;
  }

  /** The contacts of `owner` with subscription 'from' or 'both' (who see its presence). */
  async presenceSubscribers(owner: string): Promise<RosterItem[]> {
    if (!this.roster) return [];
    return (await this.roster.getRoster(owner)).filter((i) => i.subscription === 'from' || i.subscription === 'both');
  }

  /** The contacts whose presence `owner` receives (subscription 'to' or 'both'). */
  async presenceSources(owner: string): Promise<RosterItem[]> {
    if (!this.roster) return [];
    return (await this.roster.getRoster(owner)).filter((i) => i.subscription === 'to' || i.subscription === 'both');
  }
}

/** Why `requester` may not access the node of `owner`, or undefined when it may. */
export async function accessRefusal(config: NodeConfig, owner: Jid, requester: Jid, roster: RosterView): Promise<StanzaError | undefined> {
  if (owner.bare === requester.bare || config.accessModel === 'open') return undefined;
  const item = config.accessModel === 'presence' || config.accessModel === 'roster' ? await roster.item(owner.bare, requester.bare) : undefined;
  return contactRefusal(config, item);
}

/** Why the contact of this roster item (undefined: not in the roster) may not access a node, if it may not. */
export function contactRefusal(config: NodeConfig, item: RosterItem | undefined): StanzaError | undefined {
  switch (config.accessModel) {
    case 'open':
      return undefined;
    case 'presence':
      if (item?.subscription === 'from' || item?.subscription === 'both') return undefined;
      return pubsubError('not-authorized', 'presence-subscription-required');
    case 'roster':
      if (item?.inRoster && item.groups.some((g) => config.rosterGroupsAllowed.includes(g))) return undefined;
      return pubsubError('not-authorized', 'not-in-roster-group');
    case 'whitelist':
    case 'authorize':
      return pubsubError('not-allowed', 'closed-node');
  }
}
