/**
 * Routing per RFC 6120 §10 and RFC 6121 §8: to the server, to a local account or one of its resources, to
 * a component domain, or back to the sender as an error. Modules act through the chains (contexts.ts);
 * the defaults here are the RFC's rules.
 */
import type { DomainHandler, FanOutCarrier, RemoteRoute } from '@service/plugin-api';
import type { AccountService } from '../../accounts/accounts.js';
import type { Logger } from '../../log/logger.js';
import { StanzaError, errorReply } from '@service/plugin-api';
import { Jid } from '@service/plugin-api';
import type { MergedSessionDirectory } from '../sm/directory.js';
import type { SessionManager } from '../sm/session-manager.js';
import { isLocalSession, type C2SSession } from '../sm/session.js';
import { x, type XmlElement } from '@service/plugin-api';
import { Chain } from '@service/plugin-api';
import type { DeliverContext, OfflineContext, ReceiveContext, SendContext, StreamInContext } from '@service/plugin-api';
import type { IqHandlers } from './iq-handlers.js';
import type { IqTarget } from '@service/plugin-api';


export class Router {
  readonly chains = {
    streamIn: new Chain<StreamInContext>('stream_in'),
    userSend: new Chain<SendContext>('user_send'),
    deliver: new Chain<DeliverContext>('deliver'),
    offline: new Chain<OfflineContext>('offline'),
    userReceive: new Chain<ReceiveContext>('user_receive'),
  };
  readonly #domains = new Map<string, { handler: DomainHandler; owner: string }>();
  #remoteRoutes: Array<{ route: RemoteRoute; owner: string }> = [];

  constructor(
    /** This node's sessions, looked up synchronously on the hot path. */
    private readonly localSessions: SessionManager,
    /**
     * Every session, with those of the sources modules register (a cluster's other nodes): consulted only
     * when a source is registered, so a single node routes exactly as before, without awaiting.
     */
    private readonly sessions: MergedSessionDirectory,
    private readonly iq: IqHandlers,
    private readonly accounts: AccountService,
    private readonly hosts: () => readonly string[],
    private readonly logger: Logger,
  ) {}

  isLocalHost(host: string): boolean {
    return this.hosts().includes(host);
  }

  /** A component domain (conference.example.org…) served by a module. */
  registerDomain(domain: string, handler: DomainHandler, owner: string): void {
    const existing = this.#domains.get(domain);
    if (existing || this.isLocalHost(domain)) throw new Error(`domain ${domain} is already served${existing ? ` by ${existing.owner}` : ''}`);
    this.#domains.set(domain, { handler, owner });
  }

  /** A way to domains not served here (s2s, a cluster peer), tried in registration order. */
  registerRemoteRoute(route: RemoteRoute, owner: string): void {
    this.#remoteRoutes = [...this.#remoteRoutes, { route, owner }];
  }

  removeOwner(owner: string): void {
    for (const [domain, entry] of this.#domains) if (entry.owner === owner) this.#domains.delete(domain);
    this.#remoteRoutes = this.#remoteRoutes.filter((r) => r.owner !== owner);
    for (const chain of Object.values(this.chains)) chain.removeOwner(owner);
  }

  #carrier?: FanOutCarrier;

  /** How routeEach's copies for other workers' sessions travel (the workers' link), or none. */
  carryFanOut(carrier: FanOutCarrier | undefined): void {
    this.#carrier = carrier;
  }

  /**
   * A copy of `stanza` to each recipient. The copies for another worker's sessions go to it in one message
   * (it routes them there), so that the sending worker builds and routes only its own sessions' copies.
   */
  async routeEach(stanza: XmlElement, recipients: readonly string[]): Promise<void> {
    const carrier = this.#carrier;
    let away: Map<number, string[]> | undefined;
    for (const full of recipients) {
      const worker = carrier?.workerOf(full);
      if (worker === undefined) {
        await this.route(withTo(stanza, full));
        continue;
      }
      away ??= new Map();
      const group = away.get(worker);
      if (group) group.push(full);
      else away.set(worker, [full]);
    }
    if (!away) return;
    for (const [worker, group] of away) {
      // That worker is gone: each copy takes the usual way, which tells its sender.
      if (!carrier!.carry(worker, stanza, group)) for (const full of group) await this.route(withTo(stanza, full));
    }
  }

  /** A stanza from a local client (already stamped with its full JID): user_send, then routing. */
  fromClient(stanza: XmlElement, session: C2SSession, to: Jid | undefined): Promise<void> {
    const ctx: SendContext = { stanza, session, from: session.jid, to };
    return this.chains.userSend.run(ctx, () => this.route(ctx.stanza, session));
  }

  /**
   * Routes a stanza with a valid `from`. A stanza without 'to' is for the sender's own account (IQ,
   * message) or a broadcast (presence, handled in user_send); `session` is the sending client, if local.
   */
  async route(stanza: XmlElement, session?: C2SSession): Promise<void> {
    const from = Jid.tryParse(stanza.attr('from'));
    if (!from) {
      this.logger.debug({ stanza: stanza.name }, 'dropped a stanza without a valid from');
      return;
    }
    const toText = stanza.attr('to');
    let to: Jid;
    if (toText === undefined) {
      if (stanza.name === 'presence') return;
      to = from.toBare();
    } else {
      const parsed = Jid.tryParse(toText);
      if (!parsed) return this.bounce(stanza, new StanzaError('jid-malformed', `'${toText}' is not a valid JID`));
      to = parsed;
    }
    if (to.user === undefined && to.resource === undefined && this.isLocalHost(to.host)) return this.#toServer(stanza, from, to, session);
    if (this.isLocalHost(to.host)) {
      if (to.user === undefined) {
        // A module may serve one resource of a local domain (`host/resource`) as it serves a component
        // domain: mod_antispam's RTBL subscriber receives its pubsub answers and events there.
        const served = this.#domains.get(to.full);
        if (served) return served.handler(stanza, from, to);
        return this.bounce(stanza, new StanzaError('service-unavailable'));
      }
      return this.deliverToAccount(stanza, from, to, session);
    }
    const component = this.#componentOf(to.host);
    if (component) return component.handler(stanza, from, to);
    for (const { route } of this.#remoteRoutes) if (await route.route(stanza, from, to)) return;
    if (stanza.name === 'presence') return;
    const why = this.#remoteRoutes.length ? 'no route reaches it' : 'this server does not connect to other servers';
    return this.bounce(stanza, new StanzaError('remote-server-not-found', `${to.host} is not served here, and ${why}`));
  }

  #componentOf(host: string): { handler: DomainHandler } | undefined {
    return this.#domains.get(host);
  }

  async #toServer(stanza: XmlElement, from: Jid, to: Jid, session: C2SSession | undefined): Promise<void> {
    if (stanza.name === 'iq') return this.#handleIq(stanza, from, to, 'server', session);
    if (stanza.name === 'message' && stanza.attr('type') !== 'error') {
      return this.bounce(stanza, new StanzaError('service-unavailable', 'the server takes no messages'));
    }
  }

  /**
   * A stanza for a local account: the deliver chain, then RFC 6121's rules. An IQ request to the bare JID
   * is answered by the server for the account (vCard, last activity…), but passes the chain first, so
   * privacy lists and blocking refuse it to whom they refuse the account's messages.
   */
  deliverToAccount(stanza: XmlElement, from: Jid, to: Jid, session?: C2SSession): Promise<void> {
    const ctx: DeliverContext = { stanza, from, to, delivered: [] };
    if (stanza.name === 'iq' && to.isBare && (stanza.attr('type') === 'get' || stanza.attr('type') === 'set')) {
      return this.chains.deliver.run(ctx, (c) => this.#handleIq(c.stanza, c.from, c.to, 'account', session));
    }
    return this.chains.deliver.run(ctx, this.#defaultDelivery);
  }

  // A bound arrow: the deliver chain's terminal for every stanza, made once.
  readonly #defaultDelivery = (ctx: DeliverContext): Promise<void> => {
    if (ctx.to.isBare) return this.#deliverToBare(ctx, ctx);
    return this.#deliverToResource(ctx);
  };

  async #deliverToResource(ctx: DeliverContext): Promise<void> {
    const { stanza, to } = ctx;
    const type = stanza.attr('type');
    const target = this.localSessions.get(to.full) ?? (this.sessions.hasSources ? await this.sessions.get(to.full) : undefined);
    if (target && !target.closed) return this.#handOut(stanza, [target], ctx);
    if (stanza.name === 'iq') {
      if (type === 'get' || type === 'set') return this.bounce(stanza, new StanzaError('service-unavailable'));
      return;
    }
    if (stanza.name === 'message' && (type === 'chat' || type === 'normal' || type === undefined)) {
      // RFC 6121 §8.5.3.2.1: a chat or normal message for a resource that is gone goes to the account.
      return this.#deliverToBare({ ...ctx, to: to.toBare() }, ctx);
    }
    if (stanza.name === 'message' && type === 'groupchat') return this.bounce(stanza, new StanzaError('service-unavailable'));
  }

  /**
   * RFC 6121 §8.5.2 for a stanza to the bare JID. The account's sessions are read without waiting when every
   * session source can answer so (this process's, the other workers'); choosing among them is synchronous, so
   * the common case, a message for an account with one session, reaches it without an async frame here.
   */
  #deliverToBare(ctx: DeliverContext, record: DeliverContext): Promise<void> {
    const bare = ctx.to.bare;
    const known = this.sessions.byAccountNow(bare);
    if (known === undefined) return this.sessions.byAccount(bare).then((sessions) => this.#deliverToSessions(ctx, record, sessions));
    return this.#deliverToSessions(ctx, record, known);
  }

  #deliverToSessions(ctx: DeliverContext, record: DeliverContext, all: readonly C2SSession[]): Promise<void> {
    const { stanza } = ctx;
    const sessions = all.filter((s) => !s.closed);
    if (stanza.name === 'presence') return this.#handOut(stanza, sessions.filter((s) => s.available), record);
    if (stanza.name !== 'message') return RESOLVED;
    const type = stanza.attr('type') ?? 'normal';
    if (type === 'error') return RESOLVED;
    if (type === 'groupchat') return this.bounce(stanza, new StanzaError('service-unavailable'));
    const eligible = sessions.filter((s) => s.available && s.priority >= 0);
    let targets = eligible;
    if (type !== 'headline' && eligible.length) {
      const top = Math.max(...eligible.map((s) => s.priority));
      targets = eligible.filter((s) => s.priority === top);
    }
    if (targets.length > 0) return this.#handOut(stanza, targets, record);
    if (type === 'headline') return RESOLVED;
    return this.#toOffline(ctx);
  }

  /** No session takes the message: offline storage, if the account exists and a module keeps it. */
  async #toOffline(ctx: DeliverContext): Promise<void> {
    const { stanza, to } = ctx;
    if (!(await this.accounts.exists(to.user!, to.host))) return this.bounce(stanza, new StanzaError('service-unavailable'));
    const offline: OfflineContext = { stanza, from: ctx.from, to: to.toBare() };
    await this.chains.offline.run(offline, () => this.bounce(stanza, new StanzaError('service-unavailable', 'the recipient is offline')));
  }

  /** To each session in turn (the first at once), recording it in `record.delivered` once it got the stanza. */
  #handOut(stanza: XmlElement, sessions: readonly C2SSession[], record: DeliverContext, from = 0): Promise<void> {
    const session = sessions[from];
    if (!session) return RESOLVED;
    return this.deliverToSession(session, stanza).then(() => {
      record.delivered.push(session);
      return this.#handOut(stanza, sessions, record, from + 1);
    });
  }

  /**
   * The last step to a client: user_receive, then the session's stream. A session another node carries
   * gets the stanza as it is: its own node runs user_receive, where the session's state is (stream
   * management's counters and queue, the active privacy list).
   */
  deliverToSession(session: C2SSession, stanza: XmlElement): Promise<void> {
    if (!isLocalSession(session)) {
      session.write(stanza);
      return RESOLVED;
    }
    return this.chains.userReceive.run({ stanza, session }, writeToSession);
  }

  async #handleIq(stanza: XmlElement, from: Jid, to: Jid, target: IqTarget, session: C2SSession | undefined): Promise<void> {
    const type = stanza.attr('type');
    if (type !== 'get' && type !== 'set') return;
    const payloads = stanza.elements();
    if (payloads.length !== 1) return this.bounce(stanza, new StanzaError('bad-request', 'an IQ get or set carries exactly one payload element'));
    const payload = payloads[0]!;
    const handler = this.iq.find(type, payload, target, to.host);
    if (!handler) return this.bounce(stanza, new StanzaError('service-unavailable'));
    let result: XmlElement | void;
    try {
      result = await handler({ stanza, payload, from, to, self: target === 'account' && from.bare === to.bare, session });
    } catch (err) {
      if (err instanceof StanzaError) return this.bounce(stanza, err);
      this.logger.error({ err, ns: payload.ns }, 'IQ handler failed');
      return this.bounce(stanza, new StanzaError('internal-server-error'));
    }
    // A request without 'to' was for the sender's own account: the answer comes from that account.
    const reply = x('iq', { type: 'result', id: stanza.attr('id'), from: stanza.attr('to') ?? to.full, to: from.full }, result ?? undefined);
    await this.route(reply);
  }

  /** Answers a stanza with an error, unless it is an error itself (no loops). */
  async bounce(stanza: XmlElement, error: StanzaError): Promise<void> {
    if (stanza.attr('type') === 'error' || stanza.attr('type') === 'result') return;
    const reply = errorReply(stanza, error);
    // A stanza without 'to' was handled for the sender's own account (RFC 6120 §10.3.3): its error comes
    // from that account, as its result would.
    if (reply.attr('from') === undefined) reply.setAttr('from', Jid.tryParse(stanza.attr('from'))?.bare);
    const to = Jid.tryParse(reply.attr('to'));
    if (!to) return;
    if (this.isLocalHost(to.host) && to.user !== undefined) {
      // Back to a local client: straight to its session(s), without running the error through delivery policy.
      if (!to.isBare) {
        const session = this.localSessions.get(to.full) ?? (this.sessions.hasSources ? await this.sessions.get(to.full) : undefined);
        if (session) await this.deliverToSession(session, reply);
        return;
      }
      const sessions = this.sessions.hasSources ? await this.sessions.byAccount(to.bare) : this.localSessions.byAccount(to.bare);
      for (const session of sessions) await this.deliverToSession(session, reply);
    }
  }
}

/** A copy of `stanza` addressed to `to`. */
export function withTo(stanza: XmlElement, to: string): XmlElement {
  const copy = stanza.clone();
  copy.setAttr('to', to);
  return copy;
}

/** The user_receive chain's terminal: the session's stream. */
function writeToSession(ctx: ReceiveContext): void {
  ctx.session.write(ctx.stanza);
}

const RESOLVED: Promise<void> = Promise.resolve();
