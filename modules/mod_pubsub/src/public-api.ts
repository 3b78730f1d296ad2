/**
 * What other modules import of mod_pubsub (`@service/mod_pubsub/api`): the PEP service (XEP-0163) through
 * which a module publishes to and reads an account's personal nodes as the account itself would, with the
 * same auto-creation, publish-options preconditions and notifications (mod_private's XEP-0411 bridge of
 * bookmarks, say). Types and the reference only, no code of the module.
 */
import { createServiceRef, type Jid, type XmlElement } from '@service/plugin-api';

declare module '@service/plugin-api' {
  interface HookMap {
    /**
     * An item was published to an account's PEP node (by a client or through pepService), after it is
     * stored and its notifications sent: the account (bare), the node, the item id and the payload.
     * mod_private keeps the private-storage copy of XEP-0048 bookmarks from here (XEP-0411). A handler's
     * failure is logged and changes nothing for the publish.
     */
    pep_item_published: [owner: Jid, node: string, itemId: string, payload: XmlElement | undefined];
    /** An item of an account's PEP node was retracted (after its notifications); as pep_item_published. */
    pep_item_retracted: [owner: Jid, node: string, itemId: string];
  }
}

/** Publish-options (XEP-0060 §7.1.5) by field name, e.g. `{ 'pubsub#access_model': 'whitelist' }`. */
export type PublishOptions = Readonly<Record<string, string | readonly string[]>>;

export interface PepItem {
  readonly id: string;
  /** The item's payload element (undefined for an item published without one). */
  readonly payload: XmlElement | undefined;
  /** The publisher's JID. */
  readonly publisher: string;
  /** When it was (last) published, in ms. */
  readonly publishedAt: number;
}

export interface PepApi {
  /**
   * Publishes `payload` to the account's node as the account (bare JID): the node is created with the
   * options when missing; an existing node must meet them, else a StanzaError <conflict/> with
   * <precondition-not-met/> is thrown. Resolves with the item id (`itemId`, or a new one).
   */
  publish(account: string, node: string, payload: XmlElement, options?: { itemId?: string; publishOptions?: PublishOptions }): Promise<string>;
  /** The node's items, newest first (at most `max`); undefined when the account has no such node. */
  items(account: string, node: string, max?: number): Promise<PepItem[] | undefined>;
  /** Retracts an item (notifying as the node says); false when there was no such item or node. */
  retract(account: string, node: string, itemId: string): Promise<boolean>;
  /** Deletes a node with its items; false when there was none. */
  deleteNode(account: string, node: string): Promise<boolean>;
}

export const pepService = createServiceRef<PepApi>({ id: 'mod_pubsub.pep', provider: 'mod_pubsub' });
