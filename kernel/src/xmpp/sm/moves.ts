/**
 * Sessions moving between nodes (plugin API: xmpp/moving.ts): the carriers modules registered for their
 * per-session state, the movers that fetch a session from another node, and the two ends of a move.
 * Leaving, a session is unregistered without ending: no c2s_session_closed, so its contacts see no
 * unavailable presence and stream management settles nothing; arriving, it is registered detached with
 * every carrier's state back, for stream management to attach the resuming stream.
 */
import {
  Jid,
  StreamError,
  fromStoredXml,
  toStoredXml,
  type MovableValue,
  type MovedSession,
  type SessionMover,
  type SessionStateCarrier,
} from '@service/plugin-api';
import type { HookBus } from '../../hooks/hooks.js';
import type { Logger } from '../../log/logger.js';
import type { SessionManager } from './session-manager.js';
import { Session, isLocalSession, type C2SSession } from './session.js';

export class SessionMoves {
  #carriers: Array<{ carrier: SessionStateCarrier; owner: string }> = [];
  #movers: Array<{ mover: SessionMover; owner: string }> = [];

  constructor(
    private readonly local: SessionManager,
    private readonly hooks: HookBus,
    private readonly logger: Logger,
  ) {}

  addCarrier(carrier: SessionStateCarrier, owner: string): void {
    this.#carriers.push({ carrier, owner });
  }

  addMover(mover: SessionMover, owner: string): void {
    this.#movers.push({ mover, owner });
  }

  removeOwner(owner: string): void {
    this.#carriers = this.#carriers.filter((c) => c.owner !== owner);
    this.#movers = this.#movers.filter((m) => m.owner !== owner);
  }

  /** The leaving end: see XmppApi.releaseSession. Synchronous, so nothing reaches the session half-released. */
  release(session: C2SSession): MovedSession | undefined {
    if (session.closed || !isLocalSession(session) || this.local.get(session.jid.full) !== session) return undefined;
    if (this.#carriers.some(({ carrier }) => carrier.movable && !carrier.movable(session))) return undefined;
    const state: Record<string, MovableValue> = {};
    for (const { carrier } of this.#carriers) {
      const saved = carrier.save(session);
      if (saved !== undefined) state[carrier.key] = saved;
    }
    const outlet = session.outlet;
    session.setOutlet(undefined);
    session.closed = true;
    this.local.remove(session);
    outlet?.close(new StreamError('conflict', 'the session was resumed on another node'));
    this.logger.info({ jid: session.jid.full }, 'session released to another node');
    return {
      id: session.id,
      startedAt: session.startedAt,
      jid: session.jid.full,
      connection: session.connection,
      priority: session.priority,
      available: session.available,
      ...(session.presence ? { presence: toStoredXml(session.presence) } : {}),
      state,
    };
  }

  /** The arriving end: see XmppApi.moveSessionHere. */
  async bringHere(account: string, id: string): Promise<C2SSession | undefined> {
    for (const { mover, owner } of this.#movers) {
      let moved: MovedSession | undefined;
      try {
        moved = await mover.take(account, id);
      } catch (err) {
        this.logger.warn({ owner, err: (err as Error).message }, 'fetching a session from another node failed: %s', (err as Error).message);
        continue;
      }
      if (!moved) continue;
      const jid = Jid.tryParse(moved.jid);
      if (!jid?.resource || jid.bare !== account) {
        this.logger.warn({ owner, jid: moved.jid }, 'another node returned a session of another account; ignored');
        return undefined;
      }
      const session = new Session({ jid, connection: moved.connection, ip: '', port: 0 }, undefined, moved);
      session.priority = moved.priority;
      session.available = moved.available;
      session.presence = moved.presence ? fromStoredXml(moved.presence) : undefined;
      for (const { carrier, owner: carrierOwner } of this.#carriers) {
        const saved = moved.state[carrier.key];
        if (saved === undefined) continue;
        try {
          carrier.restore(session, saved);
        } catch (err) {
          this.logger.error({ err, owner: carrierOwner, jid: moved.jid }, 'a module could not restore its state of a moved session');
        }
      }
      const replaced = this.local.add(session);
      if (replaced) replaced.closed = true;
      await this.hooks.run('c2s_session_moved_in', session);
      this.logger.info({ jid: moved.jid }, 'session moved here from another node');
      return session;
    }
    return undefined;
  }
}
