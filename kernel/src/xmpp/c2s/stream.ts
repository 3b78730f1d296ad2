/**
 * A client stream (RFC 6120 §4–§7): the header, STARTTLS, SASL, resource binding, then stanzas handed to
 * the router. Elements are handled one at a time, in order. Anything the RFC forbids ends the stream with
 * the stream error it names; the session (when there is one) ends with it.
 */
import { Session } from '../sm/session.js';
import type { AccessControl } from '../../access/access-control.js';
import type { AccountService } from '../../accounts/accounts.js';
import type { LoginThrottle } from '../../accounts/login-throttle.js';
import { InvalidJid, randomHex, randomId, resourceprep } from '@service/plugin-api';
import type { HookBus } from '../../hooks/hooks.js';
import type { Logger } from '../../log/logger.js';
import { StanzaError, StreamError, errorReply, type StreamErrorCondition } from '@service/plugin-api';
import { Jid } from '@service/plugin-api';
import { NS } from '@service/plugin-api';
import type { StreamControl, StreamInContext } from '@service/plugin-api';
import { SaslFailure, type SaslConnection, type SaslExchange, type SaslMechanism, type SaslPeer } from '@service/plugin-api';
import type { XmppService } from '../service.js';
import type { C2SSession } from '@service/plugin-api';
import { x, type XmlElement } from '@service/plugin-api';
import type { Transport } from './transport.js';

export interface C2SStreamOptions {
  readonly starttls: boolean;
  readonly starttlsRequired: boolean;
  /** Access rule deciding who may log in through this listener. */
  readonly access: string;
  /** The stream must be bound (or resumed) within this time. */
  readonly negotiationTimeoutMs: number;
  /** Failed SASL attempts before the stream is closed. */
  readonly maxAuthFailures: number;
  /**
   * The listener's `shaper` option: a shaper rule or a shaper's name (none when absent). Chosen by address
   * for the new connection, then again by account and address once a resource is bound (ejabberd's c2s).
   */
  readonly shaper?: string;
}

export interface C2SEnvironment {
  readonly xmpp: XmppService;
  readonly accounts: AccountService;
  /** The server's failed-login limit. */
  readonly logins: LoginThrottle;
  readonly hooks: HookBus;
  readonly logger: Logger;
  hosts(): readonly string[];
  /** For the virtual host the stream is for: host_config's list, or the top-level one. */
  disabledMechanisms(host: string): readonly string[];
  access(): AccessControl;
}

const STANZA_NAMES = new Set(['message', 'presence', 'iq']);
const PRESENCE_TYPES = new Set(['unavailable', 'subscribe', 'subscribed', 'unsubscribe', 'unsubscribed', 'probe', 'error']);
const IQ_TYPES = new Set(['get', 'set', 'result', 'error']);

type Stage = 'header' | 'negotiating' | 'authenticated' | 'bound' | 'closed';

export class C2SStream implements StreamControl {
  /** The current stream's id: a new one for each header (RFC 6120 §4.7.3; a restart after TLS or SASL is a new stream). */
  #id = newStreamId();

  get id(): string {
    return this.#id;
  }
  #stage: Stage = 'header';
  /** The server's header was sent for the current stream (restarts open a new one). */
  #opened = false;
  #headersSent = 0;
  #host: string | undefined;
  #user: string | undefined;
  #sasl: { mechanism: SaslMechanism; exchange: SaslExchange } | undefined;
  #authFailures = 0;
  /**
   * Wrong credentials on this connection, per account then per mechanism. They are judged when the connection
   * ends: a client that tries mechanisms in turn and gets in was never guessing, and one round of mechanisms
   * with a wrong password is one failed login (see #reportFailedLogins). Made at the first wrong credential:
   * most connections never see one, and an idle session should not carry an empty map.
   */
  #wrongCredentials: Map<string, Map<string, number>> | undefined;
  #session: C2SSession | undefined;
  #queue: Promise<void> = Promise.resolve();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly transport: Transport,
    private readonly env: C2SEnvironment,
    private readonly options: C2SStreamOptions,
  ) {
    transport.setEvents({
      open: (attrs, name, ns) => this.#enqueue(() => this.#open(attrs, name, ns)),
      element: (element) => this.#enqueue(() => this.#element(element)),
      close: () => this.#enqueue(() => this.#peerClosed()),
      error: (condition, text) => this.#enqueue(() => this.close(new StreamError(condition, text))),
      disconnected: () => this.#disconnected(),
    });
    this.#timer = setTimeout(() => {
      if (this.#stage !== 'bound' && this.#stage !== 'closed') this.close(new StreamError('connection-timeout', 'the stream was not negotiated in time'));
    }, options.negotiationTimeoutMs);
    this.#timer.unref();
    if (options.shaper !== undefined && options.shaper !== 'none') transport.setShaper(env.access().shaperFor(options.shaper, { ip: transport.ip }));
  }

  /** The listener's shaper for the bound account (ejabberd's change_shaper at session open): admins may be unshaped. */
  #reshape(jid: Jid): void {
    if (this.options.shaper === undefined || this.options.shaper === 'none') return;
    this.transport.setShaper(this.env.access().shaperFor(this.options.shaper, { user: jid.user, server: jid.host, resource: jid.resource, ip: this.transport.ip }));
  }

  /**
   * The max_user_sessions rule (shaper_rules): the account's sessions on every worker and node, besides one
   * this bind replaces (same resource), must stay under its limit. Undefined when the bind may go on.
   */
  async #tooManySessions(jid: Jid): Promise<string | undefined> {
    const max = this.env.access().maxUserSessions({ user: jid.user, server: jid.host, ip: this.transport.ip });
    if (!Number.isFinite(max)) return undefined;
    const everywhere = await this.env.xmpp.sessions.byAccount(jid.bare);
    // Read this node's sessions again after the wait: a bind that went on meanwhile counts.
    const others = new Set([...everywhere, ...this.env.xmpp.localSessions.byAccount(jid.bare)].map((s) => s.jid.full));
    others.delete(jid.full);
    if (others.size < max) return undefined;
    return `too many sessions: ${jid.bare} may have ${max} at once (max_user_sessions)`;
  }

  get session(): C2SSession | undefined {
    return this.#session;
  }

  #enqueue(work: () => Promise<void> | void): void {
    this.#queue = this.#queue
      .then(() => (this.#stage === 'closed' ? undefined : work()))
      .catch((err: unknown) => {
        this.env.logger.error({ err, stream: this.id }, 'internal error in a client stream');
        this.close(new StreamError('internal-server-error'));
      });
  }

  // ---------------------------------------------------------------------------------------------
  // Closing

  /** Ends the stream: the error (if any), the closing tag, then the connection; the session ends too. */
  close(error?: StreamError): void {
    if (this.#stage === 'closed') return;
    this.#stage = 'closed';
    clearTimeout(this.#timer);
    this.#reportFailedLogins();
    if (error) {
      if (!this.#opened) this.#sendHeader(this.#host ?? this.env.hosts()[0] ?? 'localhost');
      this.transport.sendElement(error.toElement());
      this.env.logger.debug({ stream: this.id, condition: error.condition, text: error.text }, 'stream error');
    }
    if (this.#opened) this.transport.sendClose();
    this.transport.end();
    const session = this.#session;
    if (session && session.outlet === this.#outlet) void this.env.xmpp.endSession(session);
  }

  readonly #outlet = {
    write: (stanza: XmlElement) => this.transport.sendElement(stanza),
    close: (error?: StreamError) => this.close(error),
    sendAsClient: (stanza: XmlElement) => this.#sendAsClient(stanza),
  };

  /**
   * A stanza the server sends on the client's behalf (set_presence, send_stanza_c2s): queued after what the
   * client already sent, then handled as the client's own, minus stream_in (stream management counts only
   * what the client itself sent). A failure goes to the caller; the client's stream carries on.
   */
  #sendAsClient(stanza: XmlElement): Promise<boolean> {
    const done = this.#queue.then(async () => {
      const session = this.#session;
      if (this.#stage !== 'bound' || !session || session.outlet !== this.#outlet) return false;
      stanza.setAttr('from', undefined);
      await this.#stanza(stanza, session);
      return true;
    });
    this.#queue = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  #peerClosed(): void {
    // A proper close ends the session at once: stream management keeps only lost connections.
    this.close();
  }

  #disconnected(): void {
    if (this.#stage === 'closed') return;
    this.#stage = 'closed';
    clearTimeout(this.#timer);
    this.#reportFailedLogins();
    this.transport.end();
    const session = this.#session;
    if (session && session.outlet === this.#outlet) void this.env.xmpp.connectionLost(session);
  }

  /**
   * The connection is over: its wrong credentials count against the failed-login limit, per account, as many
   * times as its most-retried mechanism failed (trying SCRAM-SHA-256 then PLAIN with one wrong password is one
   * failure; three passwords with PLAIN are three). The account that finally logged in is forgiven.
   */
  #reportFailedLogins(): void {
    for (const [account, byMechanism] of this.#wrongCredentials ?? []) {
      this.env.logins.failed(this.transport.ip, account, 'c2s', Math.max(...byMechanism.values()));
    }
    this.#wrongCredentials = undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // The stream header

  #sendHeader(host: string, peer?: string): void {
    if (this.#headersSent++ > 0) this.#id = newStreamId();
    this.#opened = true;
    // RFC 6120 §4.7.2: the response header names the initiating entity when its header did.
    this.transport.sendOpen({ id: this.#id, from: host, ...(peer ? { to: peer } : {}), version: '1.0', 'xml:lang': 'en' });
  }

  #open(attrs: Record<string, string>, name: string, ns: string | undefined): void {
    const to = attrs.to?.toLowerCase();
    const served = this.env.hosts();
    this.#host ??= to && served.includes(to) ? to : undefined;
    const fail = (condition: StreamErrorCondition, text: string) => this.close(new StreamError(condition, text));
    const websocket = this.transport.kind === 'websocket';
    const local = name.includes(':') ? name.slice(name.indexOf(':') + 1) : name;
    if (!websocket && (local !== 'stream' || ns !== NS.STREAM)) return fail('invalid-namespace', `the stream element must be <stream:stream> in ${NS.STREAM}`);
    if (!websocket && attrs.xmlns !== NS.CLIENT) return fail('invalid-namespace', `the content namespace must be ${NS.CLIENT}`);
    if (!to) return fail('host-unknown', "the stream header has no 'to' attribute");
    if (!served.includes(to)) return fail('host-unknown', `${to} is not served here`);
    if (this.#host && to !== this.#host) return fail('host-unknown', `a restarted stream must be for ${this.#host}`);
    if (!attrs.version || !/^1\.\d+$/.test(attrs.version)) return fail('unsupported-version', 'this server speaks XMPP 1.0 streams (version="1.0")');
    // A banned address gets no login form at all, as with ejabberd's mod_fail2ban.
    const banned = this.#stage === 'header' ? this.env.logins.refusal(this.transport.ip) : undefined;
    if (banned) return fail('policy-violation', banned.message);
    this.#sendHeader(to, attrs.from !== undefined ? Jid.tryParse(attrs.from)?.full : undefined);
    if (this.#stage === 'header') this.#stage = 'negotiating';
    this.transport.sendElement(this.#features());
  }

  #tlsMandatory(): boolean {
    return this.options.starttlsRequired && this.transport.canStartTls && !this.transport.secure;
  }

  #connection(): SaslConnection {
    const transport = this.transport;
    return {
      host: this.#host!,
      secure: transport.secure,
      ip: transport.ip,
      channelBindings: transport.channelBindings,
      channelBinding: (type) => transport.channelBinding(type),
    };
  }

  #offeredMechanisms(): SaslMechanism[] {
    return this.env.xmpp.sasl.offered(this.#connection(), this.env.disabledMechanisms(this.#host!));
  }

  /** The stream as a mechanism sees it, with what its features announced (the lists #features sends). */
  #peer(): SaslPeer {
    const connection = this.#connection();
    return { ...connection, advertised: { mechanisms: this.#offeredMechanisms().map((m) => m.name), channelBindings: connection.channelBindings } };
  }

  #features(): XmlElement {
    const features = x('stream:features');
    if (this.#stage === 'negotiating') {
      if (this.options.starttls && this.transport.canStartTls && !this.transport.secure) {
        features.append(x('starttls', { xmlns: NS.TLS }, this.options.starttlsRequired ? x('required') : undefined));
      }
      if (!this.#tlsMandatory()) {
        const mechanisms = this.#offeredMechanisms();
        features.append(x('mechanisms', { xmlns: NS.SASL }, ...mechanisms.map((m) => x('mechanism', {}, m.name))));
        if (this.transport.channelBindings.length) {
          // XEP-0440: which channel bindings the -PLUS mechanisms can use here.
          features.append(x('sasl-channel-binding', { xmlns: 'urn:xmpp:sasl-cb:0' }, ...this.transport.channelBindings.map((type) => x('channel-binding', { type }))));
        }
      }
    } else if (this.#stage === 'authenticated') {
      features.append(x('bind', { xmlns: NS.BIND }), x('session', { xmlns: NS.SESSION }, x('optional')));
      features.append(...this.env.xmpp.features.build({ host: this.#host!, secure: this.transport.secure }));
    }
    return features;
  }

  // ---------------------------------------------------------------------------------------------
  // Elements

  async #element(element: XmlElement): Promise<void> {
    if (!this.#opened) return this.close(new StreamError('not-authorized', 'the stream is not open'));
    if (this.#stage === 'negotiating') return this.#negotiate(element);
    const account = new Jid(this.#user, this.#host!, undefined);
    const ctx: StreamInContext = { element, session: this.#session, account, stream: this };
    await this.env.xmpp.router.chains.streamIn.run(ctx, () => this.#afterAuth(element));
  }

  async #negotiate(element: XmlElement): Promise<void> {
    if (element.is('starttls', NS.TLS)) return this.#startTls();
    if (element.ns === NS.SASL) {
      if (this.#tlsMandatory()) {
        this.transport.sendElement(x('failure', { xmlns: NS.SASL }, x('encryption-required'), x('text', {}, 'STARTTLS first: this server requires an encrypted connection')));
        return;
      }
      return this.#saslElement(element);
    }
    this.close(new StreamError('not-authorized', 'authenticate before sending anything else'));
  }

  async #startTls(): Promise<void> {
    if (!this.transport.canStartTls || !this.options.starttls) {
      this.transport.sendElement(x('failure', { xmlns: NS.TLS }));
      return this.close();
    }
    this.transport.sendElement(x('proceed', { xmlns: NS.TLS }));
    try {
      await this.transport.startTls();
    } catch (err) {
      this.env.logger.debug({ err, stream: this.id }, 'TLS handshake failed');
      return this.close();
    }
    this.#opened = false;
  }

  // ---------------------------------------------------------------------------------------------
  // SASL

  async #saslElement(element: XmlElement): Promise<void> {
    try {
      await this.#saslExchangeStep(element);
    } finally {
      // Unless it restarted, the stream goes on: the transport releases what it held after the element.
      if (this.#stage === 'negotiating') this.transport.resume();
    }
  }

  async #saslExchangeStep(element: XmlElement): Promise<void> {
    const failure = (condition: string, text?: string) =>
      this.transport.sendElement(x('failure', { xmlns: NS.SASL }, x(condition), text ? x('text', { 'xml:lang': 'en' }, text) : undefined));
    if (element.local === 'abort') {
      this.#sasl = undefined;
      return failure('aborted');
    }
    let exchange: SaslExchange;
    let mechanismName: string;
    if (element.local === 'auth') {
      const name = element.attr('mechanism') ?? '';
      const mechanism = this.#offeredMechanisms().find((m) => m.name === name);
      if (!mechanism) return failure('invalid-mechanism', `mechanism ${name || '(none)'} is not offered`);
      exchange = mechanism.start(this.#peer(), { accounts: this.env.accounts, admit: (user) => this.#admit(user) });
      this.#sasl = { mechanism, exchange };
      mechanismName = name;
      const text = element.text().trim();
      if (text === '') {
        // No initial response: ask for it with an empty challenge.
        this.transport.sendElement(x('challenge', { xmlns: NS.SASL }, '='));
        return;
      }
      return this.#saslStep(text, mechanismName, failure);
    }
    if (element.local === 'response') {
      if (!this.#sasl) return failure('malformed-request', 'no authentication is in progress');
      return this.#saslStep(element.text().trim(), this.#sasl.mechanism.name, failure);
    }
    return failure('malformed-request', `unexpected <${element.local}/>`);
  }

  async #saslStep(text: string, mechanism: string, failure: (condition: string, text?: string) => void): Promise<void> {
    const { exchange, mechanism: current } = this.#sasl!;
    if (text !== '=' && !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
      this.#sasl = undefined;
      return failure(current.encodingFailure ?? 'incorrect-encoding', 'the response is not base64');
    }
    let user: string | undefined;
    try {
      const step = await exchange.step(text === '=' ? Buffer.alloc(0) : Buffer.from(text, 'base64'));
      if ('challenge' in step) {
        this.transport.sendElement(x('challenge', { xmlns: NS.SASL }, step.challenge.length ? step.challenge.toString('base64') : '='));
        return;
      }
      user = step.success.user;
      await this.#checkLogin(user);
      this.#sasl = undefined;
      this.#user = user;
      const account = `${user}@${this.#host}`;
      this.#wrongCredentials?.delete(account);
      this.env.logins.succeeded(this.transport.ip, account);
      this.#stage = 'authenticated';
      const data = step.success.additionalData;
      this.transport.sendElement(x('success', { xmlns: NS.SASL }, data?.length ? data.toString('base64') : undefined));
      this.env.logger.info({ user: `${user}@${this.#host}`, ip: this.transport.ip, mechanism, connection: this.transport.kind }, 'authenticated');
      this.#opened = false;
      this.transport.restart();
    } catch (err) {
      this.#sasl = undefined;
      if (!(err instanceof SaslFailure)) {
        this.env.logger.error({ err, mechanism }, 'SASL mechanism failed');
        return failure('temporary-auth-failure');
      }
      failure(err.condition, err.text);
      this.#authFailures++;
      if (err.wrongCredentialsFor !== undefined) {
        const account = `${err.wrongCredentialsFor}@${this.#host}`;
        const wrong = (this.#wrongCredentials ??= new Map());
        const byMechanism = wrong.get(account) ?? new Map<string, number>();
        byMechanism.set(mechanism, (byMechanism.get(mechanism) ?? 0) + 1);
        wrong.set(account, byMechanism);
      }
      await this.env.hooks.run('c2s_auth_failed', this.transport.ip, user, this.#host!, mechanism).catch(() => {});
      if (this.#authFailures >= this.options.maxAuthFailures) this.close(new StreamError('policy-violation', 'too many failed authentication attempts'));
    }
  }

  /** A password attempt for `user` may go on unless the failed-login limit refuses it from this address. */
  #admit(user: string): void {
    const refusal = this.env.logins.refusal(this.transport.ip, `${user}@${this.#host}`);
    if (refusal) throw new SaslFailure('temporary-auth-failure', refusal.message);
  }

  async #checkLogin(user: string): Promise<void> {
    const subject = { user, server: this.#host!, ip: this.transport.ip };
    if (this.env.access().matchRule(this.options.access, subject) !== 'allow') {
      throw new SaslFailure('not-authorized', 'this account may not log in here');
    }
    await this.env.hooks.run('c2s_auth_check', user, this.#host!, this.transport.ip);
  }

  // ---------------------------------------------------------------------------------------------
  // After authentication

  async #afterAuth(element: XmlElement): Promise<void> {
    const stanza = STANZA_NAMES.has(element.name) && (element.ns === NS.CLIENT || element.ns === undefined);
    if (this.#stage === 'authenticated') {
      if (stanza && element.name === 'iq' && element.getChild('bind', NS.BIND)) return this.#bind(element);
      if (stanza) return this.close(new StreamError('not-authorized', 'bind a resource before sending stanzas'));
      return this.close(new StreamError('unsupported-stanza-type', `<${element.name}/> is not understood here`));
    }
    if (!stanza) return this.close(new StreamError('unsupported-stanza-type', `<${element.name}/> is not understood here`));
    return this.#stanza(element, this.#session!);
  }

  async #bind(iq: XmlElement): Promise<void> {
    const reply = (payload: XmlElement | undefined, type = 'result') => this.transport.sendElement(x('iq', { type, id: iq.attr('id') }, payload));
    if (iq.attr('type') !== 'set') return reply(new StanzaError('bad-request').toElement(), 'error');
    // Like every IQ, a bind request needs an id (RFC 6120 §8.1.3): the client matches the answer by it.
    if (!iq.attr('id')) return reply(new StanzaError('bad-request', 'an IQ needs an id').toElement(), 'error');
    const requested = iq.getChild('bind', NS.BIND)!.getChildText('resource')?.trim();
    let resource: string;
    try {
      resource = requested ? resourceprep(requested) : randomHex(6);
    } catch (err) {
      if (!(err instanceof InvalidJid)) throw err;
      return reply(new StanzaError('bad-request', err.message).toElement(), 'error');
    }
    const jid = new Jid(this.#user, this.#host!, resource);
    const refusal = await this.#tooManySessions(jid);
    if (refusal) {
      this.env.logger.info({ user: jid.bare, ip: this.transport.ip }, 'session refused: %s', refusal);
      return this.close(new StreamError('policy-violation', refusal));
    }
    if (this.#stage !== 'authenticated') return;
    const session = new Session({ jid, connection: this.transport.kind, ip: this.transport.ip, port: this.transport.port }, this.#outlet);
    this.#session = session;
    const replaced = this.env.xmpp.localSessions.add(session);
    if (replaced && !replaced.outlet) void this.env.xmpp.endSession(replaced);
    this.#stage = 'bound';
    clearTimeout(this.#timer);
    this.#reshape(jid);
    reply(x('bind', { xmlns: NS.BIND }, x('jid', {}, jid.full)));
    await this.env.hooks.run('c2s_session_bound', session);
  }

  /** Stream management resumption: this stream takes over a detached session; false once the stream is closed. */
  adopt(session: C2SSession): boolean {
    if (this.#stage === 'closed') return false;
    this.#session = session;
    this.#stage = 'bound';
    clearTimeout(this.#timer);
    session.ip = this.transport.ip;
    session.port = this.transport.port;
    session.setOutlet(this.#outlet);
    this.#reshape(session.jid);
    return true;
  }

  sendElement(element: XmlElement): void {
    this.transport.sendElement(element);
  }

  async #stanza(stanza: XmlElement, session: C2SSession): Promise<void> {
    const router = this.env.xmpp.router;
    const from = stanza.attr('from');
    if (from !== undefined && from !== session.jid.full && from !== session.jid.bare) {
      // The same JID written otherwise (ALICE@localhost) is the same address: compare prepared forms.
      const claimed = Jid.tryParse(from);
      if (!claimed || (claimed.full !== session.jid.full && !(claimed.isBare && claimed.bare === session.jid.bare))) {
        return this.close(new StreamError('invalid-from', `this stream is ${session.jid.full}, not ${from}`));
      }
    }
    stanza.setAttr('from', session.jid.full);
    const type = stanza.attr('type');
    const bounce = (error: StanzaError) => router.deliverToSession(session, errorReply(stanza, error));
    if (stanza.name === 'iq') {
      if (!stanza.attr('id') || !type || !IQ_TYPES.has(type)) return bounce(new StanzaError('bad-request', 'an IQ needs an id and a type of get, set, result or error'));
      if (type === 'set' && stanza.getChild('session', NS.SESSION) && stanza.attr('to') === undefined) {
        // RFC 3921 session establishment: nothing left to do, but old clients still ask.
        return router.deliverToSession(session, x('iq', { type: 'result', id: stanza.attr('id') }));
      }
    }
    if (stanza.name === 'presence' && type !== undefined && !PRESENCE_TYPES.has(type)) {
      return bounce(new StanzaError('bad-request', `unknown presence type '${type}'`));
    }
    const toText = stanza.attr('to');
    let to: Jid | undefined;
    if (toText !== undefined) {
      to = Jid.tryParse(toText);
      if (!to) return type === 'error' ? undefined : bounce(new StanzaError('jid-malformed', `'${toText}' is not a valid JID`));
    }
    const broadcast = stanza.name === 'presence' && to === undefined && (type === undefined || type === 'unavailable');
    const initial = broadcast && type === undefined && !session.available;
    if (broadcast) this.#recordPresence(session, stanza, type);
    await router.fromClient(stanza, session, to);
    if (broadcast) {
      if (initial) await this.env.hooks.run('c2s_initial_presence', session);
      await this.env.hooks.run('c2s_presence_changed', session);
    }
  }

  #recordPresence(session: C2SSession, stanza: XmlElement, type: string | undefined): void {
    session.presence = stanza;
    session.available = type === undefined;
    const priority = Number.parseInt(stanza.getChildText('priority') ?? '0', 10);
    session.priority = Number.isFinite(priority) ? Math.max(-128, Math.min(127, priority)) : 0;
  }
}

function newStreamId(): string {
  return randomId(12);
}
