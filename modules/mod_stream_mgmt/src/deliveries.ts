/**
 * Which sessions got each message. A message to a bare JID is one element written to several sessions of
 * the account (RFC 6121 §8.5.2.1.1); when one of them ends without acknowledging it, its copy must not go
 * out again to the others, which have it already. The router hands the very same element to every session
 * of one fan-out, and copies, pushes and offline deliveries are new elements: so a record is keyed by the
 * element itself, and lives exactly as long as something (a queue of unacknowledged stanzas) holds it.
 *
 * Only accounts with a session under stream management on this node need records: a message written to a
 * session without it, of an account without such a session, is never asked about (a copy that goes out again
 * is a new element, and another process has other elements). Recording every message of every session cost
 * a weak-map entry per message, which the garbage collector pays for again.
 */
import type { C2SSession, XmlElement } from '@service/plugin-api';

interface Delivery {
  /** When it was first written to (or queued for) a session: the XEP-0203 stamp if it goes out again. */
  readonly firstAt: number;
  /** The sessions it was written to or queued for, acknowledged or not. */
  readonly sessions: Set<C2SSession>;
  /** Those that ended without acknowledging it. */
  readonly lost: Set<C2SSession>;
}

export class Deliveries {
  readonly #records = new WeakMap<XmlElement, Delivery>();
  /** This node's sessions with stream management on, by account (bare JID). */
  readonly #managed = new Map<string, Set<C2SSession>>();

  /** `session` has stream management on: its account's messages are recorded from now on. */
  manage(session: C2SSession): void {
    const bare = session.account.bare;
    const sessions = this.#managed.get(bare);
    if (sessions) sessions.add(session);
    else this.#managed.set(bare, new Set([session]));
  }

  /** `session` is over. */
  release(session: C2SSession): void {
    const bare = session.account.bare;
    const sessions = this.#managed.get(bare);
    if (sessions?.delete(session) && sessions.size === 0) this.#managed.delete(bare);
  }

  /** `message` is being written to `session` (or queued for it while it is detached). */
  record(message: XmlElement, session: C2SSession): void {
    if (!this.#managed.has(session.account.bare)) return;
    let delivery = this.#records.get(message);
    if (!delivery) this.#records.set(message, (delivery = { firstAt: Date.now(), sessions: new Set(), lost: new Set() }));
    delivery.sessions.add(session);
  }

  /**
   * `session` ended without acknowledging `message`. True when no other session of the account has it or
   * may still acknowledge it: the others that got it ended without acknowledging it too (they left it to
   * the last one), or there were none. A session without stream management, or one that acknowledged the
   * message, has it; one still connected or detached may yet acknowledge it, and decides when it ends.
   */
  lose(message: XmlElement, session: C2SSession): boolean {
    const delivery = this.#records.get(message);
    if (!delivery) return true;
    delivery.lost.add(session);
    for (const other of delivery.sessions) {
      if (other.account.bare === session.account.bare && !delivery.lost.has(other)) return false;
    }
    return true;
  }

  /** When `message` was first written to a session (undefined if it never was). */
  firstAt(message: XmlElement): number | undefined {
    return this.#records.get(message)?.firstAt;
  }
}
