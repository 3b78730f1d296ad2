/**
 * The XMPP side of the kernel, as modules see it (`services.xmpp`): the session manager, the router and
 * its chains, IQ handlers, service discovery, SASL mechanisms, stream features, and the ends of sessions.
 */
import type { SessionKeeper } from '@service/plugin-api';
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
import { SessionManager } from './sm/session-manager.js';
import type { C2SSession } from './sm/session.js';


export class XmppService {
  readonly sessions = new SessionManager();
  readonly iq = new IqHandlers();
  readonly disco = new DiscoRegistry();
  readonly sasl = new SaslMechanisms();
  readonly features = new StreamFeatures();
  readonly router: Router;
  #keepers: Array<{ keeper: SessionKeeper; owner: string }> = [];

  constructor(
    private readonly hooks: HookBus,
    accounts: AccountService,
    hosts: () => readonly string[],
    private readonly logger: Logger,
  ) {
    this.router = new Router(this.sessions, this.iq, accounts, hosts, logger);
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
    this.#keepers = this.#keepers.filter((k) => k.owner !== owner);
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

  /** A session is over: unregistered, and every module told (presence unavailable, last activity…). */
  async endSession(session: C2SSession): Promise<void> {
    if (session.closed) return;
    session.closed = true;
    session.setOutlet(undefined);
    this.sessions.remove(session);
    try {
      await this.hooks.run('c2s_session_closed', session);
    } catch (err) {
      this.logger.error({ err, jid: session.jid.full }, 'a module failed while a session ended');
    }
  }

  /** Closes a session with a stream error that says why (kick_user, unregister, shutdown). */
  async kick(session: C2SSession, error: StreamError): Promise<void> {
    if (session.closed) return;
    session.outlet?.close(error);
    // Ended here rather than when the stream notices it closed: the caller (unregister, kick_user) goes on
    // knowing every module has seen the session end, and a kicked session is not left resumable.
    await this.endSession(session);
  }

  async kickAccount(bare: string, error: StreamError): Promise<number> {
    const sessions = this.sessions.byAccount(bare);
    for (const session of sessions) await this.kick(session, error);
    return sessions.length;
  }
}
