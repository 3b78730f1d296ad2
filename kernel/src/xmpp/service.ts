/**
 * The XMPP side of the kernel, as modules see it (`services.xmpp`): the session directory, the router and
 * its chains, IQ handlers, service discovery, SASL mechanisms, stream features, and the ends of sessions.
 * Modules read sessions through the asynchronous directory (`sessions`: this node's and those of the
 * session sources modules register); the kernel's own hot path (streams, the router's default delivery)
 * uses the synchronous session manager of this node (`localSessions`), which modules do not see.
 */
import type { MovedSession, SessionKeeper, SessionMover, SessionSource, SessionStateCarrier, XmppApi } from '@service/plugin-api';
import type { AccountService } from '../accounts/accounts.js';
import type { HookBus } from '../hooks/hooks.js';
import type { Logger } from '../log/logger.js';
import { DiscoRegistry } from './disco.js';
import { StreamError } from '@service/plugin-api';
import { StreamFeatures } from './c2s/features.js';
import { IqHandlers } from './routing/iq-handlers.js';
import { Router } from './routing/router.js';
import { SaslMechanisms } from './sasl/mechanism.js';
import { plainMechanism } from './sasl/plain.js';
import { scramMechanism } from './sasl/scram.js';
import { MergedSessionDirectory } from './sm/directory.js';
import { SessionManager } from './sm/session-manager.js';
import { SessionMoves } from './sm/moves.js';
import { isLocalSession, type C2SSession } from './sm/session.js';


export class XmppService implements XmppApi {
  /** This node's bound sessions, synchronously: the kernel's own (streams, routing); not part of XmppApi. */
  readonly localSessions = new SessionManager();
  /** What modules read: this node's sessions, then those of the registered session sources. */
  readonly sessions: MergedSessionDirectory;
  readonly iq = new IqHandlers();
  readonly disco = new DiscoRegistry();
  readonly sasl = new SaslMechanisms();
  readonly features = new StreamFeatures();
  readonly router: Router;
  #keepers: Array<{ keeper: SessionKeeper; owner: string }> = [];
  readonly #moves: SessionMoves;

  constructor(
    private readonly hooks: HookBus,
    accounts: AccountService,
    hosts: () => readonly string[],
    private readonly logger: Logger,
  ) {
    this.sessions = new MergedSessionDirectory(this.localSessions, logger);
    this.#moves = new SessionMoves(this.localSessions, hooks, logger);
    this.router = new Router(this.localSessions, this.sessions, this.iq, accounts, hosts, logger);
    // Strongest first: clients pick the first mechanism they support from the list.
    let rank = 0;
    for (const plus of [true, false]) {
      for (const base of ['SCRAM-SHA-512', 'SCRAM-SHA-256', 'SCRAM-SHA-1'] as const) this.sasl.register(scramMechanism(base, plus), 'kernel', rank++);
    }
    this.sasl.register(plainMechanism, 'kernel', 90);
  }

  /** Everything a stopping module registered here. */
  removeOwner(owner: string): void {
    this.iq.removeOwner(owner);
    this.disco.removeOwner(owner);
    this.sasl.removeOwner(owner);
    this.features.removeOwner(owner);
    this.router.removeOwner(owner);
    this.sessions.removeOwner(owner);
    this.#keepers = this.#keepers.filter((k) => k.owner !== owner);
    this.#moves.removeOwner(owner);
  }

  addSessionCarrier(carrier: SessionStateCarrier, owner: string): void {
    this.#moves.addCarrier(carrier, owner);
  }

  addSessionMover(mover: SessionMover, owner: string): void {
    this.#moves.addMover(mover, owner);
  }

  releaseSession(session: C2SSession): MovedSession | undefined {
    return this.#moves.release(session);
  }

  moveSessionHere(account: string, id: string): Promise<C2SSession | undefined> {
    return this.#moves.bringHere(account, id);
  }

  addSessionSource(source: SessionSource, owner: string): void {
    this.sessions.addSource(source, owner);
  }

  /** A session bound on one of this node's streams (the kernel's own class), not one a source reports. */
  isLocal(session: C2SSession): boolean {
    return isLocalSession(session);
  }

  addSessionKeeper(keeper: SessionKeeper, owner: string): void {
    this.#keepers.push({ keeper, owner });
  }

  /**
   * The connection of a bound session is gone without a proper close: a keeper (stream management) may
   * keep the session, detached; otherwise it ends now.
   */
  async connectionLost(session: C2SSession): Promise<void> {
    session.setOutlet(undefined);
    for (const { keeper } of this.#keepers) if (keeper(session)) return;
    await this.endSession(session);
  }

  /**
   * A session of this node is over: unregistered, and every module told (presence unavailable, last
   * activity…). A session a source reports is its own node's to end: nothing happens here.
   */
  async endSession(session: C2SSession): Promise<void> {
    if (session.closed || !this.isLocal(session)) return;
    session.closed = true;
    session.setOutlet(undefined);
    this.localSessions.remove(session);
    try {
      await this.hooks.run('c2s_session_closed', session);
    } catch (err) {
      this.logger.error({ err, jid: session.jid.full }, 'a module failed while a session ended');
    }
  }

  /**
   * Closes a session with a stream error that says why (kick_user, unregister, shutdown). One a source
   * reports is closed through its outlet only (the source decides what that does): its node ends it.
   */
  async kick(session: C2SSession, error: StreamError): Promise<void> {
    if (session.closed) return;
    session.outlet?.close(error);
    if (!this.isLocal(session)) return;
    // Ended here rather than when the stream notices it closed: the caller (unregister, kick_user) goes on
    // knowing every module has seen the session end, and a kicked session is not left resumable.
    await this.endSession(session);
  }

  /**
   * kick for every session of an account: this node's, and those session sources report (another node's,
   * closed through their outlet by the node that carries them).
   */
  async kickAccount(bare: string, error: StreamError): Promise<number> {
    const sessions = this.sessions.hasSources ? await this.sessions.byAccount(bare) : this.localSessions.byAccount(bare);
    for (const session of sessions) await this.kick(session, error);
    return sessions.length;
  }
}
