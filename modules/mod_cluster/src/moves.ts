/**
 * Stream management resumption on another node: the node a client resumes on asks the node that carries the
 * session for it (a `take` in that node's inbox); that node releases it (services.xmpp.releaseSession: no
 * end, no unavailable presence) and answers with the session as it travels (`taken`), and the asking node
 * registers it and publishes it as its own. For a few seconds after, the old node forwards to the new one
 * what other nodes still sent it for the session (their copy of the directory catches up within
 * milliseconds), so nothing addressed to the session is rerouted as if it were gone.
 */
import { randomUUID } from 'node:crypto';
import type { C2SSession, Logger, MovedSession, SessionMover, XmppApi } from '@service/plugin-api';
import type { ClusterDirectory } from './directory.js';
import type { InboxEntry } from './inbox.js';

/** How long the asking node waits for the answer before the resumption fails. */
const TAKE_TIMEOUT_MS = 5000;
/** How long the old node forwards stanzas for a session that left it. */
const FORWARD_MS = 10_000;

export interface MovePorts {
  readonly node: string;
  readonly directory: ClusterDirectory;
  readonly xmpp: XmppApi;
  readonly logger: Logger;
  isMember(): boolean;
  isLive(node: string): boolean;
  /** Resolves false when that node is dead. */
  send(node: string, entry: InboxEntry): Promise<boolean>;
}

export class ClusterSessionMoves implements SessionMover {
  readonly #waiting = new Map<string, (moved: MovedSession | undefined) => void>();
  readonly #forwards = new Map<string, { node: string; until: number }>();

  constructor(private readonly ports: MovePorts) {}

  /** SessionMover: the session of `account` with this id, from the node that carries it. */
  async take(account: string, id: string): Promise<MovedSession | undefined> {
    const { ports } = this;
    if (!ports.isMember()) return undefined;
    const found = ports.directory.find(account, id);
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
  async onTake(entry: Extract<InboxEntry, { kind: 'take' }>, session: C2SSession | undefined): Promise<void> {
    const { ports } = this;
    const moved = session && session.id === entry.id ? ports.xmpp.releaseSession(session) : undefined;
    if (moved) {
      this.#forwards.set(entry.to, { node: entry.from, until: Date.now() + FORWARD_MS });
      await ports.directory.released(session!);
      ports.logger.info({ jid: entry.to, to: entry.from }, 'session %s handed to node %s for a resumption there', entry.to, entry.from);
    }
    await ports.send(entry.from, { kind: 'taken', to: entry.from, ref: entry.ref, session: moved ? JSON.stringify(moved) : '' });
  }

  /** The answer to a take of this node. */
  onTaken(entry: Extract<InboxEntry, { kind: 'taken' }>): void {
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
