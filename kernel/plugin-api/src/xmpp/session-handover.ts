/**
 * Stream management resumption in another process (a cluster node, a worker of this machine), over whatever
 * carries messages between them: the process a client resumes on asks the one that carries the session for
 * it (a `take`); that node releases it (services.xmpp.releaseSession: no
 * end, no unavailable presence) and answers with the session as it travels (`taken`), and the asking node
 * registers it and publishes it as its own. For a few seconds after, the old node forwards to the new one
 * what other nodes still sent it for the session (their copy of the directory catches up within
 * milliseconds), so nothing addressed to the session is rerouted as if it were gone.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import type { XmppApi } from '../services/xmpp.js';
import type { MovedSession, SessionMover } from './moving.js';
import type { SessionRecord } from './remote-session.js';
import type { C2SSession } from './session.js';

/** Node `from` resumes the session `to` (with this id) and asks for it; the answer is a `taken` with `ref`. */
export interface TakeMessage {
  readonly kind: 'take';
  readonly to: string;
  readonly id: string;
  readonly from: string;
  readonly ref: string;
}

/** The answer to a `take`: the released session as JSON (a MovedSession), or '' when it stays or is gone. */
export interface TakenMessage {
  readonly kind: 'taken';
  readonly to: string;
  readonly ref: string;
  readonly session: string;
}

/** How long the asking node waits for the answer before the resumption fails. */
const TAKE_TIMEOUT_MS = 5000;
/** How long the old node forwards stanzas for a session that left it. */
const FORWARD_MS = 10_000;

export interface HandoverPorts {
  /** This process's name, as records name it. */
  readonly node: string;
  readonly xmpp: XmppApi;
  readonly logger: Logger;
  /** Where the session of `account` with this id is bound, from this process's copy of the directory. */
  find(account: string, id: string): { full: string; record: SessionRecord } | undefined;
  /**
   * A session of this process left it for process `to`: it leaves this process's part of the directory (its
   * record stays for the new carrier to overwrite), and what this process routes to it goes to `to` from now.
   */
  released(session: C2SSession, to: string): Promise<void>;
  /** Whether this process takes part (a cluster node that left does not). */
  isMember(): boolean;
  isLive(node: string): boolean;
  /** Resolves false when that process is gone. */
  send(node: string, message: TakeMessage | TakenMessage): Promise<boolean>;
}

export class SessionHandover implements SessionMover {
  readonly #waiting = new Map<string, (moved: MovedSession | undefined) => void>();
  readonly #forwards = new Map<string, { node: string; until: number }>();

  constructor(private readonly ports: HandoverPorts) {}

  /** SessionMover: the session of `account` with this id, from the node that carries it. */
  async take(account: string, id: string): Promise<MovedSession | undefined> {
    const { ports } = this;
    if (!ports.isMember()) return undefined;
    const found = ports.find(account, id);
    if (!found || found.record.node === ports.node || !ports.isLive(found.record.node)) return undefined;
    const ref = randomUUID();
    const answer = new Promise<MovedSession | undefined>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(ref);
        reject(new Error(`node ${found.record.node} did not hand ${found.full} over within ${TAKE_TIMEOUT_MS / 1000} s`));
      }, TAKE_TIMEOUT_MS);
      this.#waiting.set(ref, (moved) => {
        clearTimeout(timer);
        this.#waiting.delete(ref);
        resolve(moved);
      });
    });
    if (!(await ports.send(found.record.node, { kind: 'take', to: found.full, id, from: ports.node, ref }))) {
      this.#waiting.get(ref)?.(undefined);
      return undefined;
    }
    return answer;
  }

  /** Another node asks for a session of this node: released and sent, or '' when it is not here or may not move. */
  async onTake(entry: TakeMessage, session: C2SSession | undefined): Promise<void> {
    const { ports } = this;
    const moved = session && session.id === entry.id ? ports.xmpp.releaseSession(session) : undefined;
    if (moved) {
      this.#forwards.set(entry.to, { node: entry.from, until: Date.now() + FORWARD_MS });
      await ports.released(session!, entry.from);
      ports.logger.info({ jid: entry.to, to: entry.from }, 'session %s handed to node %s for a resumption there', entry.to, entry.from);
    }
    await ports.send(entry.from, { kind: 'taken', to: entry.from, ref: entry.ref, session: moved ? JSON.stringify(moved) : '' });
  }

  /** The answer to a take of this node. */
  onTaken(entry: TakenMessage): void {
    const waiting = this.#waiting.get(entry.ref);
    if (!waiting) {
      // Too late: the resumption already failed, and the session the other node released is lost with it.
      if (entry.session) this.ports.logger.warn({ ref: entry.ref }, 'a session handed over after its resumption timed out was dropped');
      return;
    }
    let moved: MovedSession | undefined;
    try {
      moved = entry.session ? (JSON.parse(entry.session) as MovedSession) : undefined;
    } catch {
      this.ports.logger.warn({ ref: entry.ref }, 'a handed-over session could not be read');
    }
    waiting(moved);
  }

  /** The node a session that left this node went to, while stanzas for it are forwarded there. */
  forwardTo(full: string): string | undefined {
    const forward = this.#forwards.get(full);
    if (!forward) return undefined;
    if (forward.until >= Date.now()) return forward.node;
    this.#forwards.delete(full);
    return undefined;
  }
}
