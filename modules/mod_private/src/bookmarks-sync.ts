/**
 * XEP-0411 (bookmarks conversion): XEP-0048 bookmarks live in two places that clients use, private XML
 * storage (`jabber:iq:private`, `storage:bookmarks`) and the PEP node `storage:bookmarks` (item `current`),
 * and while PEP runs the server keeps them equal. A client's private-storage write is published to the
 * node (which notifies the account's other clients, as §3 asks), and an item published to the node is
 * written to private storage (pep_item_published, declared by mod_pubsub). The node is created private to
 * its owner (whitelist, §5). The account's disco#info says so with `urn:xmpp:bookmarks-conversion:0`.
 */
import { type AccountKey, type Jid, type Logger, type XmlElement } from '@service/plugin-api';
import type { PepApi, PublishOptions } from '@service/mod_pubsub/api';
import type { PrivateStore } from './store.js';

export const NS_BOOKMARKS_PRIVATE = 'storage:bookmarks';
export const NS_BOOKMARKS_CONVERSION = 'urn:xmpp:bookmarks-conversion:0';
/** XEP-0048 §3 (via XEP-0223): the single item holding every bookmark. */
const ITEM_ID = 'current';
const NODE_OPTIONS: PublishOptions = { 'pubsub#persist_items': 'true', 'pubsub#access_model': 'whitelist' };

export class BookmarksSync {
  constructor(
    private readonly store: PrivateStore,
    private readonly pep: PepApi,
    private readonly logger: Logger,
  ) {}

  /**
   * Private storage took `elements` for `owner`: its bookmarks, if among them, go to the PEP node. A node
   * whose options refuse them (created otherwise by a client) is left alone and the refusal logged: the
   * private write itself stands.
   */
  async privateWritten(owner: AccountKey, elements: readonly XmlElement[]): Promise<void> {
    const storage = elements.find((e) => e.is('storage', NS_BOOKMARKS_PRIVATE));
    if (storage) await this.publish(owner, storage);
  }

  /** Publishes `storage` (a <storage xmlns='storage:bookmarks'/>) as the account's PEP bookmarks. */
  async publish(owner: AccountKey, storage: XmlElement): Promise<void> {
    try {
      await this.pep.publish(`${owner.user}@${owner.host}`, NS_BOOKMARKS_PRIVATE, storage, { itemId: ITEM_ID, publishOptions: NODE_OPTIONS });
    } catch (err) {
      this.logger.warn({ err, account: `${owner.user}@${owner.host}` }, 'private-storage bookmarks could not be published to PEP');
    }
  }

  /** pep_item_published: bookmarks published to the node are what private storage answers from now on. */
  async pepPublished(owner: Jid, node: string, payload: XmlElement | undefined): Promise<void> {
    if (node !== NS_BOOKMARKS_PRIVATE || !payload?.is('storage', NS_BOOKMARKS_PRIVATE)) return;
    await this.store.set({ user: owner.user!, host: owner.host }, [payload]);
  }
}
