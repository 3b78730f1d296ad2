/**
 * Pings silent clients (XEP-0199 §4.1, server-to-client). Each tracked session has one timer: it fires
 * when the session may have been silent for the whole interval; if something arrived meanwhile it is
 * re-armed for the rest, so that traffic costs a timestamp, not a timer reset. An unanswered ping
 * closes the stream with <connection-timeout/>; an error reply counts as an answer (the client is there).
 */
import { StreamError, randomHex, x, type C2SSession, type Logger, type XmlElement, type XmppApi } from '@service/plugin-api';
import { NS_PING } from './ns.js';

export interface PingSettings {
  readonly intervalMs: number;
  readonly ackTimeoutMs: number;
}

interface Tracked {
  lastHeard: number;
  timer: NodeJS.Timeout | undefined;
  /** The id of the ping waiting for its answer. */
  awaiting: string | undefined;
}

export class IdlePinger {
  readonly #tracked = new Map<C2SSession, Tracked>();
  #settings: PingSettings | undefined;

  constructor(
    private readonly xmpp: XmppApi,
    private readonly logger: Logger,
  ) {}

  /**
   * Starts (settings), changes, or stops (undefined) pinging; every current session is (re)armed. The
   * settings apply at once; the sessions are armed once the directory answers, each as track() decides
   * then (a stop or another change meanwhile wins; one bound meanwhile is tracked by its hook).
   */
  async configure(settings: PingSettings | undefined): Promise<void> {
    for (const session of [...this.#tracked.keys()]) this.untrack(session);
    this.#settings = settings;
    if (settings) for (const session of await this.xmpp.sessions.all()) this.track(session);
  }

  /** Only this node's sessions: another node's client answers on that node, which pings it. */
  track(session: C2SSession): void {
    if (!this.#settings || session.closed || this.#tracked.has(session) || !this.xmpp.isLocal(session)) return;
    const tracked: Tracked = { lastHeard: Date.now(), timer: undefined, awaiting: undefined };
    this.#tracked.set(session, tracked);
    this.#arm(session, tracked, this.#settings.intervalMs);
  }

  untrack(session: C2SSession): void {
    const tracked = this.#tracked.get(session);
    if (!tracked) return;
    clearTimeout(tracked.timer);
    this.#tracked.delete(session);
  }

  /** Something arrived from the session's client. */
  heard(session: C2SSession, element: XmlElement): void {
    const tracked = this.#tracked.get(session);
    if (!tracked) return;
    tracked.lastHeard = Date.now();
    if (tracked.awaiting !== undefined && isAnswerTo(element, tracked.awaiting)) {
      tracked.awaiting = undefined;
      clearTimeout(tracked.timer);
      this.#arm(session, tracked, this.#settings!.intervalMs);
    }
  }

  #arm(session: C2SSession, tracked: Tracked, delayMs: number): void {
    tracked.timer = setTimeout(() => this.#due(session, tracked), delayMs);
    tracked.timer.unref();
  }

  #due(session: C2SSession, tracked: Tracked): void {
    const settings = this.#settings;
    if (!settings || this.#tracked.get(session) !== tracked) return;
    if (session.closed) return this.untrack(session);
    const silentFor = Date.now() - tracked.lastHeard;
    // A detached session (stream management waiting for a resumption) has nobody to answer: wait.
    if (!session.outlet) return this.#arm(session, tracked, settings.intervalMs);
    if (silentFor < settings.intervalMs) return this.#arm(session, tracked, settings.intervalMs - silentFor);
    const id = `ping-${randomHex(6)}`;
    tracked.awaiting = id;
    const ping = x('iq', { type: 'get', id, from: session.jid.host, to: session.jid.full }, x('ping', { xmlns: NS_PING }));
    void this.xmpp.router.deliverToSession(session, ping).catch((err: unknown) => this.logger.warn({ err, jid: session.jid.full }, 'could not send a ping'));
    tracked.timer = setTimeout(() => this.#unanswered(session, tracked, id), settings.ackTimeoutMs);
    tracked.timer.unref();
  }

  #unanswered(session: C2SSession, tracked: Tracked, id: string): void {
    if (this.#tracked.get(session) !== tracked || tracked.awaiting !== id) return;
    this.untrack(session);
    this.logger.info({ jid: session.jid.full }, 'closing a session that did not answer a ping');
    void this.xmpp.kick(session, new StreamError('connection-timeout', 'no answer to a ping'));
  }
}

function isAnswerTo(element: XmlElement, id: string): boolean {
  const type = element.attr('type');
  return element.name === 'iq' && element.attr('id') === id && (type === 'result' || type === 'error');
}
