/**
 * The session manager: every bound session by full JID and by account. Binding a resource that is
 * already bound replaces the older session (it gets a <conflict/> stream error), as RFC 6120 §7.7.2.2
 * allows and clients expect.
 */
import { StreamError } from '@service/plugin-api';
import type { C2SSession } from './session.js';

export class SessionManager {
  readonly #byFull = new Map<string, C2SSession>();
  readonly #byAccount = new Map<string, Map<string, C2SSession>>();
  #listeners: Array<(event: 'added' | 'removed', session: C2SSession) => void> = [];

  /**
   * Registers a bound session. A session already bound to the same full JID is unregistered and its stream
   * closed with <conflict/>; it is returned so that the caller can end it (close hooks) when it has no stream.
   */
  add(session: C2SSession): C2SSession | undefined {
    const old = this.#byFull.get(session.jid.full);
    if (old) {
      this.remove(old);
      old.outlet?.close(new StreamError('conflict', 'Replaced by new connection'));
    }
    this.#byFull.set(session.jid.full, session);
    let resources = this.#byAccount.get(session.account.bare);
    if (!resources) this.#byAccount.set(session.account.bare, (resources = new Map()));
    resources.set(session.resource, session);
    for (const listener of this.#listeners) listener('added', session);
    return old;
  }

  /** Removes a session if it is the one registered under its JID (a replaced session is not). */
  remove(session: C2SSession): boolean {
    if (this.#byFull.get(session.jid.full) !== session) return false;
    this.#byFull.delete(session.jid.full);
    const resources = this.#byAccount.get(session.account.bare);
    resources?.delete(session.resource);
    if (resources?.size === 0) this.#byAccount.delete(session.account.bare);
    for (const listener of this.#listeners) listener('removed', session);
    return true;
  }

  get(full: string): C2SSession | undefined {
    return this.#byFull.get(full);
  }

  /** The sessions of an account (bare JID), in binding order. */
  byAccount(bare: string): C2SSession[] {
    const resources = this.#byAccount.get(bare);
    return resources ? [...resources.values()] : [];
  }

  accounts(): IterableIterator<string> {
    return this.#byAccount.keys();
  }

  all(): IterableIterator<C2SSession> {
    return this.#byFull.values();
  }

  get count(): number {
    return this.#byFull.size;
  }

  countHost(host: string): number {
    let n = 0;
    for (const session of this.#byFull.values()) if (session.jid.host === host) n++;
    return n;
  }

  onChange(listener: (event: 'added' | 'removed', session: C2SSession) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }
}
