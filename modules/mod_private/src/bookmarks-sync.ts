/**
 * Bookmarks kept equal in the three places clients keep them, while PEP runs: private XML storage
 * (`jabber:iq:private`, XEP-0048's `storage:bookmarks`), the PEP node `storage:bookmarks` (item `current`,
 * XEP-0048 over PEP, which XEP-0411 keeps equal to private storage), and the XEP-0402 node
 * `urn:xmpp:bookmarks:1` (one item per room). A write to any of them is carried to the other two:
 * a client's private-storage write (iq.ts), and items published or retracted on either PEP node (the
 * pep_item_published and pep_item_retracted hooks, declared by mod_pubsub). So a bookmark added by a
 * XEP-0402 client shows in Converse, which reads `storage:bookmarks`, and in a client of private storage.
 * The nodes are created private to their owner (whitelist). While one account's bookmarks are carried,
 * the hooks its own publishes raise are ignored, so a change travels once and never loops; an unchanged
 * item is not published again (no needless notification). The account's disco#info announces
 * `urn:xmpp:bookmarks-conversion:0` (XEP-0411) and `urn:xmpp:bookmarks:1#compat-pep` (XEP-0402 §5.3).
 */
import { serialize, x, type AccountKey, type Jid, type Logger, type XmlElement } from '@service/plugin-api';
import type { PepApi, PublishOptions } from '@service/mod_pubsub/api';
import { NS_BOOKMARKS_LEGACY, NS_BOOKMARKS_PEP, legacyConference, pepBookmark, type PepBookmark } from './bookmark-forms.js';
import type { PrivateStore } from './store.js';

export const NS_BOOKMARKS_CONVERSION = 'urn:xmpp:bookmarks-conversion:0';
/**
 * XEP-0402 §5.3: XEP-0402 items and XEP-0048 in PEP are kept equal. `#compat` (the same with private storage)
 * is true as well but not announced: Converse 14 reads XEP-0402 when it sees it, yet never asks for that
 * node's notifications, so a bookmark added elsewhere would not show until it logs in again.
 */
export const NS_BOOKMARKS_COMPAT_PEP = 'urn:xmpp:bookmarks:1#compat-pep';
/** XEP-0048 §3 (via XEP-0223): the single item holding every bookmark. */
const LEGACY_ITEM = 'current';
const LEGACY_OPTIONS: PublishOptions = { 'pubsub#persist_items': 'true', 'pubsub#access_model': 'whitelist' };
/** XEP-0402 §3: what the bookmarks node must be. */
export const PEP_BOOKMARK_OPTIONS: PublishOptions = {
  'pubsub#persist_items': 'true',
  'pubsub#max_items': 'max',
  'pubsub#send_last_published_item': 'never',
  'pubsub#access_model': 'whitelist',
};

export class BookmarksSync {
  /** Accounts whose bookmarks are being carried now: the hooks of their own publishes are ignored. */
  readonly #carrying = new Set<string>();

  constructor(
    private readonly store: PrivateStore,
    private readonly pep: PepApi,
    private readonly logger: Logger,
  ) {}

  /** A client wrote private storage: its bookmarks, if among `elements`, go to both PEP nodes. */
  async privateWritten(owner: AccountKey, elements: readonly XmlElement[]): Promise<void> {
    const storage = elements.find((e) => e.is('storage', NS_BOOKMARKS_LEGACY));
    if (storage) await this.#carry(owner, () => this.#fromLegacy(owner, storage, { publishLegacy: true, writePrivate: false, retractMissing: true }));
  }

  /**
   * bookmarks_to_pep: `storage` (private storage's) published on both PEP nodes; XEP-0402 items of rooms it
   * does not name stay (the command adds, it does not prune).
   */
  async exportPrivate(owner: AccountKey, storage: XmlElement): Promise<void> {
    // The command's caller learns of a failure (a node whose options refuse them): no logging in its place.
    await this.#carry(owner, () => this.#fromLegacy(owner, storage, { publishLegacy: true, writePrivate: false, retractMissing: false }), { rethrow: true });
  }

  /** pep_item_published */
  async pepPublished(owner: Jid, node: string, payload: XmlElement | undefined): Promise<void> {
    const account = { user: owner.user!, host: owner.host };
    if (node === NS_BOOKMARKS_LEGACY && payload?.is('storage', NS_BOOKMARKS_LEGACY)) {
      await this.#carry(account, () => this.#fromLegacy(account, payload, { publishLegacy: false, writePrivate: true, retractMissing: true }));
    } else if (node === NS_BOOKMARKS_PEP) {
      await this.#carry(account, () => this.#fromPep(account));
    }
  }

  /** pep_item_retracted */
  async pepRetracted(owner: Jid, node: string): Promise<void> {
    const account = { user: owner.user!, host: owner.host };
    if (node === NS_BOOKMARKS_PEP) await this.#carry(account, () => this.#fromPep(account));
  }

  async #carry(owner: AccountKey, work: () => Promise<void>, options: { rethrow?: boolean } = {}): Promise<void> {
    const key = bare(owner);
    if (this.#carrying.has(key)) return;
    this.#carrying.add(key);
    try {
      await work();
    } catch (err) {
      if (options.rethrow) throw err;
      // The write that started it stands; the copies catch up at the next change.
      this.logger.warn({ err, account: key }, 'bookmarks could not be carried to every place clients keep them');
    } finally {
      this.#carrying.delete(key);
    }
  }

  /** XEP-0048 bookmarks (private storage's or the legacy node's) to the places that lack them. */
  async #fromLegacy(owner: AccountKey, storage: XmlElement, how: { publishLegacy: boolean; writePrivate: boolean; retractMissing: boolean }): Promise<void> {
    if (how.writePrivate) await this.store.set(owner, [storage]);
    if (how.publishLegacy) await this.#publishLegacy(owner, storage);
    const wanted = storage.getChildren('conference').map(pepBookmark).filter((b): b is PepBookmark => b !== undefined);
    const existing = new Map(((await this.pep.items(bare(owner), NS_BOOKMARKS_PEP)) ?? []).map((i) => [i.id, i.payload && serialize(i.payload)]));
    for (const { room, payload } of wanted) {
      if (existing.get(room) === serialize(payload)) continue;
      await this.pep.publish(bare(owner), NS_BOOKMARKS_PEP, payload, { itemId: room, publishOptions: PEP_BOOKMARK_OPTIONS });
    }
    if (!how.retractMissing) return;
    const rooms = new Set(wanted.map((b) => b.room));
    for (const id of existing.keys()) if (!rooms.has(id)) await this.pep.retract(bare(owner), NS_BOOKMARKS_PEP, id);
  }

  /** The XEP-0402 items, as XEP-0048 bookmarks, to the legacy node and private storage. */
  async #fromPep(owner: AccountKey): Promise<void> {
    const items = (await this.pep.items(bare(owner), NS_BOOKMARKS_PEP)) ?? [];
    const storage = storageOf(items.map((i) => legacyConference(i.id, i.payload)));
    await this.store.set(owner, [storage]);
    const [current] = (await this.pep.items(bare(owner), NS_BOOKMARKS_LEGACY, 1)) ?? [];
    if (current?.payload && serialize(current.payload) === serialize(storage)) return;
    await this.#publishLegacy(owner, storage);
  }

  async #publishLegacy(owner: AccountKey, storage: XmlElement): Promise<void> {
    await this.pep.publish(bare(owner), NS_BOOKMARKS_LEGACY, storage, { itemId: LEGACY_ITEM, publishOptions: LEGACY_OPTIONS });
  }
}

/** A <storage xmlns='storage:bookmarks'/> of conferences, in a stable order (by room), so that equal sets compare equal. */
function storageOf(conferences: readonly XmlElement[]): XmlElement {
  const sorted = [...conferences].sort((a, b) => (a.attr('jid') ?? '').localeCompare(b.attr('jid') ?? ''));
  return x('storage', { xmlns: NS_BOOKMARKS_LEGACY }, ...sorted);
}

function bare(owner: AccountKey): string {
  return `${owner.user}@${owner.host}`;
}
