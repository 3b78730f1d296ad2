/**
 * A process's copy of the sessions other processes carry (the nodes of a cluster, the other workers of this
 * machine), kept current by what those processes announce: a session set (bound, presence changed), deleted
 * (closed) or a whole process gone. Routing then reads memory. It answers the server's session directory as
 * a SessionSource, with one RemoteSession object per record (a record is replaced, never changed, so routing
 * to a session costs a map look-up, not a new object with its JID parsed again).
 */
import { Jid } from '../jid/jid.js';
import { RemoteSession, type SessionPeers, type SessionRecord } from './remote-session.js';
import type { C2SSession } from './session.js';
import type { SessionSource } from '../services/xmpp.js';

export type SessionAnnouncement =
  | { readonly op: 'set'; readonly bare: string; readonly resource: string; readonly record: SessionRecord }
  | { readonly op: 'del'; readonly bare: string; readonly resource: string; readonly id: string }
  | { readonly op: 'node-gone'; readonly node: string };

export class RemoteSessionTable implements SessionSource {
  /** bare JID → resource → record, for sessions of other processes only. */
  readonly #accounts = new Map<string, Map<string, SessionRecord>>();
  readonly #sessions = new WeakMap<SessionRecord, RemoteSession>();

  constructor(
    /** This process's name: a record naming it is this process's own session, never kept here. */
    private readonly self: string,
    private readonly peers: SessionPeers,
  ) {}

  apply(event: SessionAnnouncement): void {
    if (event.op === 'node-gone') {
      for (const [bare, resources] of this.#accounts) {
        for (const [resource, record] of resources) if (record.node === event.node) resources.delete(resource);
        if (!resources.size) this.#accounts.delete(bare);
      }
      return;
    }
    if (event.op === 'set') {
      if (event.record.node === this.self) {
        // This process took the full JID over: another process's copy of it is gone.
        this.#accounts.get(event.bare)?.delete(event.resource);
        return;
      }
      let resources = this.#accounts.get(event.bare);
      if (!resources) this.#accounts.set(event.bare, (resources = new Map()));
      resources.set(event.resource, event.record);
      return;
    }
    const resources = this.#accounts.get(event.bare);
    if (resources?.get(event.resource)?.id === event.id) {
      resources.delete(event.resource);
      if (!resources.size) this.#accounts.delete(event.bare);
    }
  }

  /** Replaces the whole copy (loaded again after a cut, when announcements may have been missed). */
  replace(entries: Iterable<readonly [bare: string, resource: string, record: SessionRecord]>): void {
    this.#accounts.clear();
    for (const [bare, resource, record] of entries) this.apply({ op: 'set', bare, resource, record });
  }

  record(bare: string, resource: string): SessionRecord | undefined {
    return this.#accounts.get(bare)?.get(resource);
  }

  account(bare: string): ReadonlyMap<string, SessionRecord> | undefined {
    return this.#accounts.get(bare);
  }

  *entries(): Iterable<[bare: string, resource: string, record: SessionRecord]> {
    for (const [bare, resources] of this.#accounts) for (const [resource, record] of resources) yield [bare, resource, record];
  }

  /** The record of the session of `bare` with this id, wherever it is bound. */
  find(bare: string, id: string): { full: string; record: SessionRecord } | undefined {
    for (const [resource, record] of this.#accounts.get(bare) ?? []) if (record.id === id) return { full: `${bare}/${resource}`, record };
    return undefined;
  }

  get size(): number {
    let n = 0;
    for (const resources of this.#accounts.values()) n += resources.size;
    return n;
  }

  /** The session of a record, as the router sees it. */
  session(bare: string, resource: string, record: SessionRecord): RemoteSession {
    let session = this.#sessions.get(record);
    if (!session) this.#sessions.set(record, (session = new RemoteSession(Jid.parse(`${bare}/${resource}`), record, this.peers)));
    return session;
  }

  /** The sessions a process carries, as this copy knows them (for the presence they leave when it is gone). */
  sessionsOf(node: string): RemoteSession[] {
    const out: RemoteSession[] = [];
    for (const [bare, resource, record] of this.entries()) if (record.node === node) out.push(this.session(bare, resource, record));
    return out;
  }

  // SessionSource

  async get(full: string): Promise<C2SSession | undefined> {
    const jid = Jid.tryParse(full);
    if (!jid?.resource) return undefined;
    const known = this.record(jid.bare, jid.resource);
    return known && this.session(jid.bare, jid.resource, known);
  }

  async byAccount(bare: string): Promise<C2SSession[]> {
    return this.byAccountNow(bare);
  }

  byAccountNow(bare: string): C2SSession[] {
    const resources = this.#accounts.get(bare);
    if (!resources) return [];
    return [...resources].sort(([, a], [, b]) => a.started - b.started).map(([resource, record]) => this.session(bare, resource, record));
  }

  async accounts(): Promise<string[]> {
    return [...this.#accounts.keys()];
  }

  async all(): Promise<C2SSession[]> {
    return [...this.entries()].map(([bare, resource, record]) => this.session(bare, resource, record));
  }

  async count(): Promise<number> {
    return this.size;
  }

  async countHost(host: string): Promise<number> {
    let n = 0;
    for (const [bare, resources] of this.#accounts) if (bare.slice(bare.indexOf('@') + 1) === host) n += resources.size;
    return n;
  }
}
