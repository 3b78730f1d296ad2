/**
 * The personal eventing service of every account (XEP-0163): nodes live on the account's bare JID and
 * only the account publishes, configures, retracts, purges and deletes; nodes are created on first
 * publish with the publish-options, whose preconditions an existing node must meet (XEP-0060 §7.1.5).
 * Readers are checked against the node's access model (access.ts); notifications follow each change
 * (notifications.ts). Everything is in SQL, so any worker or node serves any account.
 */
import { randomBytes } from 'node:crypto';
import { StanzaError, x, type HooksApi, type Jid, type Logger, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { accessRefusal, RosterView } from './access.js';
import { pubsubError } from './errors.js';
import { applyFields, checkPreconditions, defaultPepConfig, type ConfigLimits, type NodeConfig } from './node-config.js';
import { eventMessage, type Notifier } from './notifications.js';
import type { PubsubStore, StoredItem, StoredNode } from './store.js';

export interface PepDeps {
  readonly store: PubsubStore;
  readonly notifier: Notifier;
  readonly roster: () => RosterApi | undefined;
  readonly limits: () => ConfigLimits;
  readonly now: () => number;
  readonly hooks: HooksApi;
  readonly logger: Logger;
}

/** What a publish carries besides the item. */
export interface PublishRequest {
  readonly node: string;
  /** The client's item id, or undefined for one the service picks. */
  readonly itemId: string | undefined;
  /** The payload (undefined: a notification-only publish, refused on a persistent node). */
  readonly payload: XmlElement | undefined;
  /** The publish-options fields (FORM_TYPE apart), empty when none were given. */
  readonly options: ReadonlyMap<string, string[]>;
}

export class Pep {
  constructor(private readonly deps: PepDeps) {}

  rosterView(): RosterView {
    return new RosterView(this.deps.roster());
  }

  /** The owner's node, or item-not-found. */
  async requireNode(owner: Jid, node: string): Promise<StoredNode> {
    const found = await this.deps.store.node(owner.bare, node);
    if (!found) throw new StanzaError('item-not-found', `no node ${node}`);
    return found;
  }

  async hasNode(owner: Jid, node: string): Promise<boolean> {
    return (await this.deps.store.node(owner.bare, node)) !== undefined;
  }

  async nodes(owner: Jid): Promise<StoredNode[]> {
    return this.deps.store.nodes(owner.bare);
  }

  /** Publishes as `publisher` (the owner's session or its bare JID); resolves with the item id. */
  async publish(owner: Jid, publisher: Jid, request: PublishRequest): Promise<string> {
    requireOwner(owner, publisher, 'only the account publishes to its own nodes');
    const limits = this.deps.limits();
    const now = this.deps.now();
    let node = await this.deps.store.node(owner.bare, request.node);
    if (node) {
      checkPreconditions(node.config, request.options, limits);
    } else {
      const config = applyFields(defaultPepConfig(), request.options, limits);
      node = (await this.deps.store.ensure(owner.bare, request.node, config, now)).node;
      // Lost a race with another creation: the options must hold on the node that won.
      checkPreconditions(node.config, request.options, limits);
    }
    const config = node.config;
    if (config.persistItems && request.payload === undefined) throw pubsubError('bad-request', 'payload-required', 'a persistent node needs a payload');
    const itemId = request.itemId ?? newItemId(now);
    const item = x('item', { id: itemId }, request.payload);
    if (config.persistItems) await this.deps.store.publish(node.id, itemId, publisher.full, item, config.maxItems, now);
    const shown = x('item', { id: itemId }, config.deliverPayloads ? request.payload?.clone() : undefined);
    await this.deps.notifier.notify(owner, request.node, config, eventMessage(owner.bare, config, x('items', { node: request.node }, shown)), this.rosterView());
    await this.deps.hooks.run('pep_item_published', owner, request.node, itemId, request.payload).catch((err: unknown) => {
      this.deps.logger.error({ err, owner: owner.bare, node: request.node }, 'a pep_item_published handler failed');
    });
    return itemId;
  }

  /** The items `requester` may read: the newest `max`, or those named. */
  async items(owner: Jid, requester: Jid, node: string, options: { max?: number; ids?: readonly string[] }): Promise<{ node: StoredNode; items: StoredItem[] }> {
    const found = await this.requireNode(owner, node);
    const refusal = await accessRefusal(found.config, owner, requester, this.rosterView());
    if (refusal) throw refusal;
    return { node: found, items: await this.deps.store.items(found.id, { ...options, expireBefore: expiry(found.config, this.deps.now()) }) };
  }

  async retract(owner: Jid, requester: Jid, node: string, itemId: string, notify: boolean | undefined): Promise<void> {
    requireOwner(owner, requester, 'only the account retracts items of its own nodes');
    const found = await this.requireNode(owner, node);
    if (!(await this.deps.store.retract(found.id, itemId))) throw new StanzaError('item-not-found', `no item ${itemId} in ${node}`);
    if (notify ?? found.config.notifyRetract) {
      await this.deps.notifier.notify(owner, node, found.config, eventMessage(owner.bare, found.config, x('items', { node }, x('retract', { id: itemId }))), this.rosterView());
    }
    await this.deps.hooks.run('pep_item_retracted', owner, node, itemId).catch((err: unknown) => {
      this.deps.logger.error({ err, owner: owner.bare, node }, 'a pep_item_retracted handler failed');
    });
  }

  async create(owner: Jid, requester: Jid, node: string, fields: ReadonlyMap<string, string[]>): Promise<void> {
    requireOwner(owner, requester, 'only the account creates its own nodes');
    const config = applyFields(defaultPepConfig(), fields, this.deps.limits());
    const created = await this.deps.store.create(owner.bare, node, config, this.deps.now());
    if (!created) throw new StanzaError('conflict', `node ${node} exists`);
  }

  async configuration(owner: Jid, requester: Jid, node: string): Promise<NodeConfig> {
    requireOwner(owner, requester, 'only the account configures its own nodes');
    return (await this.requireNode(owner, node)).config;
  }

  async configure(owner: Jid, requester: Jid, node: string, fields: ReadonlyMap<string, string[]>): Promise<void> {
    requireOwner(owner, requester, 'only the account configures its own nodes');
    const found = await this.requireNode(owner, node);
    const config = applyFields(found.config, fields, this.deps.limits());
    await this.deps.store.setConfig(found.id, config);
    if (config.notifyConfig) await this.deps.notifier.notify(owner, node, config, eventMessage(owner.bare, config, x('configuration', { node })), this.rosterView());
  }

  async deleteNode(owner: Jid, requester: Jid, node: string): Promise<void> {
    requireOwner(owner, requester, 'only the account deletes its own nodes');
    const found = await this.requireNode(owner, node);
    await this.deps.store.deleteNode(found.id);
    if (found.config.notifyDelete) await this.deps.notifier.notify(owner, node, found.config, eventMessage(owner.bare, found.config, x('delete', { node })), this.rosterView());
  }

  async purge(owner: Jid, requester: Jid, node: string): Promise<void> {
    requireOwner(owner, requester, 'only the account purges its own nodes');
    const found = await this.requireNode(owner, node);
    await this.deps.store.purge(found.id);
    await this.deps.notifier.notify(owner, node, found.config, eventMessage(owner.bare, found.config, x('purge', { node })), this.rosterView());
  }

  /** Every node and item of an account (remove_user). */
  async removeAccount(owner: Jid): Promise<void> {
    await this.deps.store.deleteService(owner.bare);
  }
}

function requireOwner(owner: Jid, requester: Jid, text: string): void {
  if (owner.bare !== requester.bare) throw new StanzaError('forbidden', text);
}

/** The oldest update time still served (0: items never expire). */
export function expiry(config: NodeConfig, now: number): number {
  return config.itemExpire > 0 ? now - config.itemExpire * 1000 : 0;
}

function newItemId(now: number): string {
  return `${now.toString(36)}-${randomBytes(6).toString('hex')}`;
}
