/**
 * Push sessions in SQL (migrations.ts): what <enable/> stores, <disable/> and failing app servers remove,
 * and what every notification reads. Notifications read an account's push sessions for messages to
 * detached sessions and offline accounts, so they are read once per account and kept in a shared cache
 * (CachesApi): a change made by one worker or node is dropped by every one, so that all of them notify
 * exactly the push sessions the database holds.
 */
import { createHash } from 'node:crypto';
import { fromStoredXml, toStoredXml, type CachesApi, type Jid, type ModuleContext, type XmlElement } from '@service/plugin-api';
import { PUSH_TABLE } from './migrations.js';

type Db = ModuleContext['db'];

/** One app server node an account enabled (XEP-0357 §5). */
export interface PushSession {
  /** The app server's JID, prepared. */
  readonly service: string;
  readonly node: string;
  /** SHA-256 of the node, hex: the key of the row with the account and the service. */
  readonly nodeHash: string;
  /** The id of the client session that enabled it. */
  readonly sessionId: string;
  /** The publish-options form to send with each notification, if the client gave one. */
  readonly publishOptions: XmlElement | undefined;
  readonly enabledAt: number;
}

/** What <enable/> asks for. */
export interface PushEnable {
  readonly service: string;
  readonly node: string;
  readonly sessionId: string;
  readonly publishOptions: XmlElement | undefined;
}

interface Row {
  service: string;
  node: string;
  node_hash: string;
  session_id: string;
  publish_options: string;
  enabled_at: number | string;
}

/** The shared cache's name (CachesApi). */
const PUSH_CACHE = 'push_sessions';
/** Accounts kept in the cache; past it the cache starts over (cheap, and bounded). */
const CACHE_LIMIT = 10_000;

export function nodeHash(node: string): string {
  return createHash('sha256').update(node, 'utf8').digest('hex');
}

export class PushStore {
  readonly #cache = new Map<string, Promise<PushSession[]>>();
  /** Leaves the shared caches (when the module stops). */
  readonly leave: () => void;

  constructor(
    private readonly db: Db,
    private readonly caches: CachesApi,
  ) {
    this.leave = caches.register(PUSH_CACHE, (key) => (key === undefined ? this.#cache.clear() : this.#cache.delete(key)));
  }

  /** The push sessions of an account (bare JID), oldest first. */
  forAccount(account: Jid): Promise<PushSession[]> {
    const key = account.bare;
    let cached = this.#cache.get(key);
    if (!cached) {
      if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear();
      cached = this.#read(account);
      this.#cache.set(key, cached);
      // A failed read is not remembered.
      cached.catch(() => this.#cache.delete(key));
    }
    return cached;
  }

  async #read(account: Jid): Promise<PushSession[]> {
    const rows: Row[] = await this.db(PUSH_TABLE)
      .where({ host: account.host, username: account.user })
      .orderBy('enabled_at')
      .select('service', 'node', 'node_hash', 'session_id', 'publish_options', 'enabled_at');
    return rows.map((row) => ({
      service: row.service,
      node: row.node,
      nodeHash: row.node_hash,
      sessionId: row.session_id,
      publishOptions: row.publish_options ? fromStoredXml(row.publish_options) : undefined,
      enabledAt: Number(row.enabled_at),
    }));
  }

  /** Stores (or renews: same app server and node) a push session. */
  async enable(account: Jid, push: PushEnable, now: number): Promise<void> {
    await this.db(PUSH_TABLE)
      .insert({
        host: account.host,
        username: account.user!,
        service: push.service,
        node: push.node,
        node_hash: nodeHash(push.node),
        session_id: push.sessionId,
        publish_options: push.publishOptions ? toStoredXml(push.publishOptions) : '',
        enabled_at: now,
      })
      .onConflict(['host', 'username', 'service', 'node_hash'])
      .merge(['node', 'session_id', 'publish_options', 'enabled_at']);
    await this.#forget(account);
  }

  /** Removes the account's push sessions with this app server: one node, or all of its nodes. */
  async disable(account: Jid, service: string, node?: string): Promise<number> {
    return this.disableHashed(account, service, node === undefined ? undefined : nodeHash(node));
  }

  /** disable, with the node named by its hash (what an app server's answer carries back). */
  async disableHashed(account: Jid, service: string, hash: string | undefined): Promise<number> {
    const query = this.db(PUSH_TABLE).where({ host: account.host, username: account.user!, service });
    if (hash !== undefined) query.andWhere('node_hash', hash);
    const deleted = await query.delete();
    await this.#forget(account);
    return deleted;
  }

  async deleteAccount(account: Jid): Promise<number> {
    const deleted = await this.db(PUSH_TABLE).where({ host: account.host, username: account.user! }).delete();
    await this.#forget(account);
    return deleted;
  }

  /** Removes the push sessions, of every account, last enabled before `before` (ms); returns how many. */
  async deleteEnabledBefore(before: number): Promise<number> {
    const deleted = await this.db(PUSH_TABLE).where('enabled_at', '<', before).delete();
    this.#cache.clear();
    await this.caches.changed(PUSH_CACHE);
    return deleted;
  }

  async #forget(account: Jid): Promise<void> {
    this.#cache.delete(account.bare);
    await this.caches.changed(PUSH_CACHE, account.bare);
  }
}
