/**
 * The pubsub service on its own domain (pubsub.@HOST@, XEP-0060): nodes created by those the
 * `access_createnode` rule allows (their creator becomes owner), configured, purged and deleted by owners;
 * items published by whom the publish model allows and retracted by owners and their publishers;
 * explicit subscriptions with notifications to every subscribed JID; affiliations (owner, publisher,
 * member, outcast) managed by owners; access models open, presence and roster (judged from an owner's
 * roster), whitelist (affiliated JIDs only). Everything lives in SQL, so any worker serves any node.
 */
import { randomBytes } from 'node:crypto';
import { Jid, StanzaError, x, type RouterApi, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { contactRefusal, RosterView } from './access.js';
import { pubsubError } from './errors.js';
import type { Affiliation, MembershipStore, Subscription } from './membership-store.js';
import { applyFields, checkPreconditions, defaultPepConfig, type ConfigLimits, type NodeConfig } from './node-config.js';
import { eventMessage } from './notifications.js';
import { expiry } from './pep.js';
import type { PubsubStore, StoredItem, StoredNode } from './store.js';

export interface ServiceDeps {
  readonly store: PubsubStore;
  readonly members: MembershipStore;
  readonly router: RouterApi;
  readonly roster: () => RosterApi | undefined;
  readonly limits: () => ConfigLimits;
  /** Whether the `access_createnode` rule lets this bare JID create nodes. */
  readonly mayCreate: (bare: string) => boolean;
  readonly now: () => number;
}

/** A node of the service's defaults (XEP-0060 §8.2): open, persistent, the last 10 items kept. */
export function defaultServiceConfig(): NodeConfig {
  return { ...defaultPepConfig(), accessModel: 'open', maxItems: 10, sendLastPublishedItem: 'on_sub' };
}

export class PubsubService {
  constructor(private readonly deps: ServiceDeps) {}

  async requireNode(service: string, node: string): Promise<StoredNode> {
    const found = await this.deps.store.node(service, node);
    if (!found) throw new StanzaError('item-not-found', `no node ${node}`);
    return found;
  }

  nodes(service: string): Promise<StoredNode[]> {
    return this.deps.store.nodes(service);
  }

  affiliation(node: StoredNode, who: Jid): Promise<Affiliation | undefined> {
    return this.deps.members.affiliation(node.id, who.bare);
  }

  subscriptionsOf(bare: string): Promise<Subscription[]> {
    return this.deps.members.subscriptionsOf(bare);
  }

  affiliationsOf(bare: string): Promise<Array<{ nodeId: number; affiliation: Affiliation }>> {
    return this.deps.members.affiliationsOf(bare);
  }

  subscriptionsOfNode(node: StoredNode): Promise<Subscription[]> {
    return this.deps.members.subscriptions(node.id);
  }

  affiliationsOfNode(node: StoredNode): Promise<Array<{ jid: string; affiliation: Affiliation }>> {
    return this.deps.members.affiliations(node.id);
  }

  async requireOwner(node: StoredNode, who: Jid): Promise<void> {
    if ((await this.affiliation(node, who)) !== 'owner') throw new StanzaError('forbidden', 'only an owner of the node may do this');
  }

  /** Creates a node owned by `creator`; resolves with its name (a new one for an instant node). */
  async create(service: string, creator: Jid, node: string | undefined, fields: ReadonlyMap<string, string[]>): Promise<string> {
    if (!this.deps.mayCreate(creator.bare)) throw new StanzaError('forbidden', 'you may not create nodes on this service');
    const name = node ?? randomBytes(8).toString('hex');
    const config = applyFields(defaultServiceConfig(), fields, this.deps.limits());
    const created = await this.deps.store.create(service, name, config, this.deps.now());
    if (!created) throw new StanzaError('conflict', `node ${name} exists`);
    await this.deps.members.setAffiliation(created.id, creator.bare, 'owner');
    return name;
  }

  /** Why `who` may not read the node's items or subscribe, or undefined when it may. */
  async refusal(node: StoredNode, who: Jid): Promise<StanzaError | undefined> {
    const affiliation = await this.affiliation(node, who);
    if (affiliation === 'outcast') return new StanzaError('forbidden', 'you are banned from this node');
    if (affiliation === 'owner' || affiliation === 'publisher' || affiliation === 'member') return undefined;
    const { config } = node;
    if (config.accessModel !== 'presence' && config.accessModel !== 'roster') return contactRefusal(config, undefined);
    // The roster of any owner may grant it.
    const roster = new RosterView(this.deps.roster());
    let refusal: StanzaError | undefined = contactRefusal(config, undefined);
    for (const owner of (await this.deps.members.affiliations(node.id)).filter((a) => a.affiliation === 'owner')) {
      refusal = contactRefusal(config, await roster.item(owner.jid, who.bare));
      if (!refusal) return undefined;
    }
    return refusal;
  }

  async items(service: string, who: Jid, node: string, options: { max?: number; ids?: readonly string[] }): Promise<StoredItem[]> {
    const found = await this.requireNode(service, node);
    const refused = await this.refusal(found, who);
    if (refused) throw refused;
    return this.deps.store.items(found.id, { ...options, expireBefore: expiry(found.config, this.deps.now()) });
  }

  async publish(service: string, publisher: Jid, node: string, itemId: string | undefined, payload: XmlElement | undefined, options: ReadonlyMap<string, string[]>): Promise<string> {
    let found = await this.deps.store.node(service, node);
    if (!found) {
      // Auto-create (XEP-0060 §7.1.4): the publisher creates it with the publish-options, and owns it; one who
      // may not create nodes is told the node does not exist.
      if (!this.deps.mayCreate(publisher.bare)) throw new StanzaError('item-not-found', `no node ${node}`);
      await this.create(service, publisher, node, options).catch((err: unknown) => {
        if (!(err instanceof StanzaError && err.condition === 'conflict')) throw err;
      });
      found = await this.requireNode(service, node);
    }
    const affiliation = await this.affiliation(found, publisher);
    if (affiliation === 'outcast' || !(await this.#mayPublish(found, publisher, affiliation))) throw new StanzaError('forbidden', 'you may not publish to this node');
    checkPreconditions(found.config, options, this.deps.limits());
    const { config } = found;
    if (config.persistItems && payload === undefined) throw pubsubError('bad-request', 'payload-required', 'a persistent node needs a payload');
    const now = this.deps.now();
    const id = itemId ?? `${now.toString(36)}-${randomBytes(6).toString('hex')}`;
    const item = x('item', { id, publisher: publisher.bare }, payload);
    if (config.persistItems) await this.deps.store.publish(found.id, id, publisher.full, item, config.maxItems, now);
    await this.#notify(service, found, x('items', { node }, x('item', { id, publisher: publisher.bare }, config.deliverPayloads ? payload?.clone() : undefined)));
    return id;
  }

  async #mayPublish(node: StoredNode, who: Jid, affiliation: Affiliation | undefined): Promise<boolean> {
    if (affiliation === 'owner' || affiliation === 'publisher') return true;
    switch (node.config.publishModel) {
      case 'open':
        return true;
      case 'subscribers':
        return (await this.deps.members.subscriptionsOf(who.bare)).some((s) => s.nodeId === node.id);
      case 'publishers':
        return false;
    }
  }

  async retract(service: string, who: Jid, node: string, itemId: string, notify: boolean | undefined): Promise<void> {
    const found = await this.requireNode(service, node);
    const affiliation = await this.affiliation(found, who);
    if (affiliation !== 'owner' && affiliation !== 'publisher') throw new StanzaError('forbidden', 'you may not retract items of this node');
    const [item] = await this.deps.store.items(found.id, { ids: [itemId] });
    if (!item) throw new StanzaError('item-not-found', `no item ${itemId} in ${node}`);
    // Owners retract any item; a publisher its own.
    if (affiliation === 'publisher' && Jid.tryParse(item.publisher)?.bare !== who.bare) throw new StanzaError('forbidden', 'you may not retract this item');
    await this.deps.store.retract(found.id, itemId);
    if (notify ?? found.config.notifyRetract) await this.#notify(service, found, x('items', { node }, x('retract', { id: itemId })));
  }

  async subscribe(service: string, who: Jid, node: string, jid: Jid): Promise<Subscription> {
    if (jid.bare !== who.bare) throw pubsubError('bad-request', 'invalid-jid', 'the subscribed JID must be yours');
    const found = await this.requireNode(service, node);
    const refused = await this.refusal(found, who);
    if (refused) throw refused;
    const subscription = await this.deps.members.subscribe(found.id, jid.full, jid.bare, this.deps.now());
    if (found.config.sendLastPublishedItem !== 'never') {
      const [last] = await this.deps.store.items(found.id, { max: 1, expireBefore: expiry(found.config, this.deps.now()) });
      if (last) {
        const shown = found.config.deliverPayloads ? last.item.clone() : x('item', { id: last.itemId });
        const message = eventMessage(service, found.config, x('items', { node }, shown), x('delay', { xmlns: 'urn:xmpp:delay', from: service, stamp: new Date(last.updatedAt).toISOString() }));
        message.setAttr('to', jid.full);
        await this.deps.router.route(message);
      }
    }
    return subscription;
  }

  async unsubscribe(service: string, who: Jid, node: string, jid: Jid): Promise<void> {
    const found = await this.requireNode(service, node);
    if (jid.bare !== who.bare && (await this.affiliation(found, who)) !== 'owner') throw new StanzaError('forbidden', 'you may only unsubscribe yourself');
    if (!(await this.deps.members.unsubscribe(found.id, jid.full))) throw pubsubError('unexpected-request', 'not-subscribed', `${jid.full} is not subscribed`);
  }

  async configure(service: string, who: Jid, node: string, fields: ReadonlyMap<string, string[]>): Promise<void> {
    const found = await this.requireNode(service, node);
    await this.requireOwner(found, who);
    const config = applyFields(found.config, fields, this.deps.limits());
    await this.deps.store.setConfig(found.id, config);
    if (config.notifyConfig) await this.#notify(service, { ...found, config }, x('configuration', { node }));
  }

  async deleteNode(service: string, who: Jid, node: string): Promise<void> {
    const found = await this.requireNode(service, node);
    await this.requireOwner(found, who);
    if (found.config.notifyDelete) await this.#notify(service, found, x('delete', { node }));
    await this.deps.store.deleteNode(found.id);
    await this.deps.members.deleteNode(found.id);
  }

  async purge(service: string, who: Jid, node: string): Promise<void> {
    const found = await this.requireNode(service, node);
    await this.requireOwner(found, who);
    await this.deps.store.purge(found.id);
    await this.#notify(service, found, x('purge', { node }));
  }

  /** Sets affiliations as an owner asks; the node must keep an owner. */
  async setAffiliations(node: StoredNode, who: Jid, changes: ReadonlyArray<{ jid: Jid; affiliation: Affiliation | 'none' }>): Promise<void> {
    await this.requireOwner(node, who);
    const current = new Map((await this.deps.members.affiliations(node.id)).map((a) => [a.jid, a.affiliation as Affiliation | 'none']));
    for (const change of changes) current.set(change.jid.bare, change.affiliation);
    if (![...current.values()].includes('owner')) throw new StanzaError('not-acceptable', 'a node keeps at least one owner');
    await this.deps.members.applyAffiliations(node.id, changes.map((c) => ({ bare: c.jid.bare, affiliation: c.affiliation })));
  }

  /** Subscribes or unsubscribes JIDs as an owner asks. */
  async setSubscriptions(node: StoredNode, who: Jid, changes: ReadonlyArray<{ jid: Jid; subscribed: boolean }>): Promise<void> {
    await this.requireOwner(node, who);
    for (const change of changes) {
      if (change.subscribed) await this.deps.members.subscribe(node.id, change.jid.full, change.jid.bare, this.deps.now());
      else await this.deps.members.unsubscribe(node.id, change.jid.full);
    }
  }

  /** What an account leaves behind (remove_user): its subscriptions, its affiliations, the nodes it alone owned. */
  async removeAccount(bare: string): Promise<void> {
    for (const { nodeId, affiliation } of await this.deps.members.affiliationsOf(bare)) {
      if (affiliation !== 'owner') continue;
      const owners = (await this.deps.members.affiliations(nodeId)).filter((a) => a.affiliation === 'owner');
      if (owners.length === 1) {
        await this.deps.store.deleteNode(nodeId);
        await this.deps.members.deleteNode(nodeId);
      }
    }
    await this.deps.members.removeAccount(bare);
  }

  /** An event to every subscribed JID of the node. */
  async #notify(service: string, node: StoredNode, content: XmlElement): Promise<void> {
    if (!node.config.deliverNotifications) return;
    const subscriptions = await this.deps.members.subscriptions(node.id);
    if (subscriptions.length === 0) return;
    await this.deps.router.routeEach(eventMessage(service, node.config, content), subscriptions.map((s) => s.jid));
  }
}
