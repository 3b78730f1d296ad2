/**
 * What each client session wants to be notified of (XEP-0115 entity capabilities, XEP-0163 §4 `+notify`).
 * A session's last broadcast presence names its capabilities by hash; the features behind a hash are
 * learned once by asking the client (disco#info from its own bare JID, which any client answers), checked
 * against the hash, and kept in SQL so that every worker and node knows them, with an in-process cache in
 * front (entries never change: a hash names one feature set). The query's answer comes back on the
 * client's stream, in user_send of the process that asked; `takeAnswer` consumes it there.
 */
import { randomBytes } from 'node:crypto';
import { x, type C2SSession, type Knex, type Logger, type RouterApi, type XmlElement } from '@service/plugin-api';
import { supportedHash, verifies } from './caps-hash.js';
import { CAPS_TABLE } from './migrations.js';
import { NS_CAPS, NS_DISCO_INFO } from './ns.js';

/** The capabilities a presence announces. */
export interface CapsRef {
  readonly hash: string;
  readonly node: string;
  readonly ver: string;
}

/** How long a client has to answer the disco#info query. */
const QUERY_TIMEOUT_MS = 30_000;
/** Feature sets kept in memory (a server sees few distinct clients). */
const CACHE_SIZE = 1000;

export function capsOf(presence: XmlElement | undefined): CapsRef | undefined {
  const c = presence?.getChild('c', NS_CAPS);
  const hash = c?.attr('hash');
  const node = c?.attr('node');
  const ver = c?.attr('ver');
  if (!hash || !node || !ver || !supportedHash(hash)) return undefined;
  return { hash, node, ver };
}

const keyOf = (caps: CapsRef) => `${caps.hash} ${caps.ver}`;

interface Pending {
  readonly session: C2SSession;
  readonly caps: CapsRef;
  readonly timer: NodeJS.Timeout;
  readonly resolve: (features: ReadonlySet<string> | undefined) => void;
}

export class Capabilities {
  readonly #known = new Map<string, ReadonlySet<string>>();
  readonly #pending = new Map<string, Pending>();
  /** Queries in flight by caps key, so that many sessions of one client version cost one query. */
  readonly #asking = new Map<string, Promise<ReadonlySet<string> | undefined>>();

  constructor(
    private readonly db: Knex,
    private readonly router: RouterApi,
    private readonly logger: Logger,
  ) {}

  /** The features of a session's announced capabilities, if known (verified here or by another process). */
  async featuresOf(session: C2SSession): Promise<ReadonlySet<string> | undefined> {
    const caps = capsOf(session.presence);
    return caps ? this.#lookup(keyOf(caps)) : undefined;
  }

  /** Whether the session asked for notifications of `node` (`<node>+notify` in its capabilities). */
  async wantsNotify(session: C2SSession, node: string): Promise<boolean> {
    return (await this.featuresOf(session))?.has(`${node}+notify`) ?? false;
  }

  /**
   * The features of the capabilities the session just announced, asking its client when nobody knows
   * them yet; undefined when it announces none, does not answer, or answers what its hash does not say.
   */
  async learn(session: C2SSession): Promise<ReadonlySet<string> | undefined> {
    const caps = capsOf(session.presence);
    if (!caps) return undefined;
    const key = keyOf(caps);
    const known = await this.#lookup(key);
    if (known) return known;
    let asking = this.#asking.get(key);
    if (!asking) {
      // One query in flight per session: a client that floods presence with new hashes costs one query at a time.
      if ([...this.#pending.values()].some((p) => p.session === session)) return undefined;
      asking = this.#ask(session, caps).finally(() => this.#asking.delete(key));
      this.#asking.set(key, asking);
    }
    return asking;
  }

  /** Consumes the answer to one of our queries (from user_send); false for anything else. */
  takeAnswer(session: C2SSession, stanza: XmlElement): boolean {
    if (stanza.name !== 'iq') return false;
    const type = stanza.attr('type');
    const id = stanza.attr('id');
    if ((type !== 'result' && type !== 'error') || id === undefined) return false;
    const pending = this.#pending.get(id);
    if (!pending || pending.session !== session) return false;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    const query = type === 'result' ? stanza.getChild('query', NS_DISCO_INFO) : undefined;
    if (!query || !verifies(query, pending.caps.hash, pending.caps.ver)) {
      if (query) this.logger.info({ jid: session.jid.full, ver: pending.caps.ver }, 'a client answered disco#info with features its caps hash does not match');
      pending.resolve(undefined);
      return true;
    }
    const features = new Set(query.getChildren('feature').map((f) => f.attr('var') ?? ''));
    void this.#save(keyOf(pending.caps), features).then(
      () => pending.resolve(features),
      (err: unknown) => {
        this.logger.warn({ err }, 'could not store verified capabilities');
        pending.resolve(features);
      },
    );
    return true;
  }

  /** Gives up every query (the module stops). */
  stop(): void {
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.resolve(undefined);
    }
    this.#pending.clear();
  }

  clear(): void {
    this.#known.clear();
  }

  #ask(session: C2SSession, caps: CapsRef): Promise<ReadonlySet<string> | undefined> {
    return new Promise((resolve) => {
      const id = `caps-${randomBytes(6).toString('hex')}`;
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        resolve(undefined);
      }, QUERY_TIMEOUT_MS);
      timer.unref();
      this.#pending.set(id, { session, caps, timer, resolve });
      const query = x('iq', { type: 'get', id, from: session.jid.bare, to: session.jid.full }, x('query', { xmlns: NS_DISCO_INFO, node: `${caps.node}#${caps.ver}` }));
      void this.router.deliverToSession(session, query).catch((err: unknown) => {
        this.logger.warn({ err, jid: session.jid.full }, 'could not ask a client for its capabilities');
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(undefined);
      });
    });
  }

  async #lookup(key: string): Promise<ReadonlySet<string> | undefined> {
    const cached = this.#known.get(key);
    if (cached) return cached;
    const row = (await this.db(CAPS_TABLE).where({ caps: key }).first('features')) as { features: string } | undefined;
    if (!row) return undefined;
    const features = new Set(JSON.parse(row.features) as string[]);
    this.#remember(key, features);
    return features;
  }

  async #save(key: string, features: ReadonlySet<string>): Promise<void> {
    this.#remember(key, features);
    await this.db(CAPS_TABLE)
      .insert({ caps: key, features: JSON.stringify([...features]), created_at: Date.now() })
      .onConflict('caps')
      .ignore();
  }

  #remember(key: string, features: ReadonlySet<string>): void {
    if (this.#known.size >= CACHE_SIZE) this.#known.delete(this.#known.keys().next().value!);
    this.#known.set(key, features);
  }
}
