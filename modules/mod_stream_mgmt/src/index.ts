/**
 * mod_stream_mgmt: stream management (XEP-0198). Acknowledgements both ways, and resumption: a session
 * whose connection is lost stays bound, detached, for `resume_timeout` seconds, its stanzas queued; a
 * new stream that resumes it gets the unacknowledged ones again. A session that ends for good hands its
 * unacknowledged stanzas to unacknowledged.ts (messages back to routing, once; IQ requests answered).
 * In a cluster, a resumption may come to another node than the one that carried the stream: the session
 * then moves here (services.xmpp.moveSessionHere) with its counters and queue (carrier.ts), and resumes.
 * Keeping a session runs the `sm_session_detached` hook (public-api.ts).
 */
import { StreamError, defineModule, x, type C2SSession, type ServerServices, type StreamInContext, type XmlElement } from '@service/plugin-api';
import { streamManagementCarrier } from './carrier.js';
import { Deliveries } from './deliveries.js';
import { NS_SM, SM_MAX_KEY, SmState } from './state.js';
import { Unacknowledged } from './unacknowledged.js';

const STANZAS = new Set(['message', 'presence', 'iq']);
const ACK_REQUEST_DELAY_MS = 1000;

interface Options {
  resume_timeout: number;
  max_resume_timeout: number;
  max_ack_queue: number;
}

/** `h`: on a failed resumption of a session the server knows, what it handled of it (XEP-0198 §5 allows it). */
function failed(condition: 'unexpected-request' | 'item-not-found' | 'feature-not-implemented', text?: string, h?: number): XmlElement {
  return x('failed', { xmlns: NS_SM, h }, x(condition, { xmlns: 'urn:ietf:params:xml:ns:xmpp-stanzas' }), text ? x('text', { xmlns: 'urn:ietf:params:xml:ns:xmpp-stanzas' }, text) : undefined);
}

function createStreamManagement(services: ServerServices, options: () => Options) {
  const { xmpp } = services;
  const deliveries = new Deliveries();
  const unacknowledged = new Unacknowledged(xmpp.router, deliveries, services.logger);

  /** Asks the client for an acknowledgement soon, once per burst of stanzas. */
  const requestAck = (session: C2SSession, sm: SmState) => {
    if (sm.ackRequest || sm.queue.length === 0) return;
    sm.ackRequest = setTimeout(() => {
      sm.ackRequest = undefined;
      if (sm.queue.length) session.write(x('r', { xmlns: NS_SM }));
    }, ACK_REQUEST_DELAY_MS);
    sm.ackRequest.unref();
  };

  const enable = (ctx: StreamInContext) => {
    const session = ctx.session;
    if (!session) return ctx.stream.sendElement(failed('unexpected-request', 'bind a resource first'));
    if (SmState.of(session)?.enabled) return ctx.stream.sendElement(failed('unexpected-request', 'stream management is already enabled'));
    const sm = SmState.enable(session);
    sm.enabled = true;
    deliveries.manage(session);
    sm.resumable = ctx.element.attr('resume') === 'true' || ctx.element.attr('resume') === '1';
    const asked = Number(ctx.element.attr('max'));
    const max = Math.min(Number.isFinite(asked) && asked > 0 ? asked : options().resume_timeout, options().max_resume_timeout);
    ctx.stream.sendElement(x('enabled', { xmlns: NS_SM, id: sm.resumable ? session.id : undefined, resume: sm.resumable ? 'true' : undefined, max: sm.resumable ? max : undefined }));
    session.state(SM_MAX_KEY, () => max);
  };

  const sessionToResume = async (account: string, id: string): Promise<C2SSession | undefined> => {
    const local = (await xmpp.sessions.byAccount(account)).find((s) => s.id === id);
    if (local && xmpp.isLocal(local)) return local;
    // Known on another node, or not known at all yet (a directory copy may lag): ask the movers, if any.
    const moved = await xmpp.moveSessionHere(account, id);
    if (moved) hold(moved);
    return moved;
  };

  const resume = async (ctx: StreamInContext) => {
    if (ctx.session) return ctx.stream.sendElement(failed('unexpected-request', 'this stream is already bound'));
    const previd = ctx.element.attr('previd');
    // A session of this node, or one another node of a cluster carries, which moves here first (detached,
    // its resumption timer running here from now on). The lookup is the only wait: what follows reads the
    // session as it is after it and acts without awaiting, so no other resumption or end of the session can
    // come in between.
    const session = previd ? await sessionToResume(ctx.account.bare, previd) : undefined;
    const sm = session && SmState.of(session);
    if (!session || !sm?.resumable || session.closed) return ctx.stream.sendElement(failed('item-not-found', 'no session to resume with this id'));
    const h = Number(ctx.element.attr('h'));
    if (Number.isInteger(h) && h >= 0 && !sm.acknowledge(h)) {
      // A failed attempt changes nothing for the session: still detached, it ends when its timeout
      // expires (XEP-0198 §5), unless a correct <resume/> comes first. Ending it here would let a client
      // with a wrong counter throw away what it could still get; stopping its timer would keep it online,
      // unreachable, for ever.
      return ctx.stream.sendElement(failed('unexpected-request', 'h counts more stanzas than were sent', sm.inbound));
    }
    const previous = session.outlet;
    // This stream may have closed during the lookup: then the session stays as it was, its timer running.
    if (!ctx.stream.adopt(session)) return;
    clearTimeout(sm.resumeTimer);
    sm.resumeTimer = undefined;
    previous?.close(new StreamError('conflict', 'the session was resumed on another connection'));
    ctx.stream.sendElement(x('resumed', { xmlns: NS_SM, h: sm.inbound, previd: session.id }));
    // Everything the client has not acknowledged, again, in order.
    for (const stanza of sm.queue) session.write(stanza);
    requestAck(session, sm);
    services.logger.info({ jid: session.jid.full, resent: sm.queue.length }, 'session resumed');
  };

  // Neither layer below is async itself: every stanza in and out crosses them, most on sessions without
  // stream management, for which they only pass it on.
  const streamIn = (ctx: StreamInContext, next: () => Promise<void>): Promise<void> | void => {
    const element = ctx.element;
    if (element.ns === NS_SM) return smElement(ctx);
    const sm = ctx.session && SmState.of(ctx.session);
    // Counted once handled (XEP-0198 §4); only <enable/> turns stream management on, never a stanza.
    if (!sm?.enabled || !STANZAS.has(element.name)) return next();
    return next().then(() => sm.countInbound());
  };

  const smElement = (ctx: StreamInContext): Promise<void> | void => {
    const element = ctx.element;
    if (element.local === 'enable') return enable(ctx);
    if (element.local === 'resume') return resume(ctx);
    const sm = ctx.session && SmState.of(ctx.session);
    if (!sm?.enabled) return ctx.stream.sendElement(failed('unexpected-request', 'stream management is not enabled'));
    if (element.local === 'r') return ctx.stream.sendElement(x('a', { xmlns: NS_SM, h: sm.inbound }));
    if (element.local === 'a') {
      const h = Number(element.attr('h'));
      if (!Number.isInteger(h) || h < 0 || !sm.acknowledge(h)) {
        // XEP-0198 §4: the application-specific condition goes inside the stream error.
        const tooHigh = x('handled-count-too-high', { xmlns: NS_SM, h: element.attr('h'), 'send-count': sm.outbound });
        return ctx.session!.outlet?.close(new StreamError('undefined-condition', 'acknowledged more stanzas than were sent', tooHigh));
      }
      return;
    }
    return;
  };

  const userReceive = (ctx: { stanza: XmlElement; session: C2SSession }, next: () => Promise<void>): Promise<void> | void => {
    const sm = SmState.of(ctx.session);
    if (sm?.enabled) {
      if (sm.queue.length >= options().max_ack_queue) {
        ctx.session.outlet?.close(new StreamError('resource-constraint', 'too many unacknowledged stanzas'));
        return;
      }
      sm.sent(ctx.stanza);
      requestAck(ctx.session, sm);
      // Also a session whose state came with it (resumed from another process) rather than by <enable/>.
      deliveries.manage(ctx.session);
    }
    // Every session, with stream management or not: who got a message decides what becomes of another
    // session's unacknowledged copy of it (recorded for accounts that have such a session, deliveries.ts).
    if (ctx.stanza.name === 'message') deliveries.record(ctx.stanza, ctx.session);
    return next();
  };

  /** Keeps a resumable session detached for its timeout (a lost connection, or a session moved here to resume). */
  const hold = (session: C2SSession): boolean => {
    const sm = SmState.of(session);
    if (!sm?.enabled || !sm.resumable) return false;
    const seconds = session.peekState<number>(SM_MAX_KEY) ?? options().resume_timeout;
    sm.resumeTimer = setTimeout(() => void xmpp.endSession(session), seconds * 1000);
    sm.resumeTimer.unref();
    services.logger.debug({ jid: session.jid.full, seconds }, 'connection lost; session kept for resumption');
    return true;
  };

  /**
   * A lost connection (the session keeper): hold the session, and tell who must know that it waits (push
   * notifications, public-api.ts); the stream's end does not wait for them.
   */
  const keep = (session: C2SSession): boolean => {
    if (!hold(session)) return false;
    const unacknowledged = [...SmState.of(session)!.queue];
    void services.hooks.run('sm_session_detached', session, unacknowledged).catch((err: unknown) => services.logger.error({ err, jid: session.jid.full }, 'an sm_session_detached handler failed'));
    return true;
  };

  /** The session is over: what the client never acknowledged is settled (unacknowledged.ts). */
  const sessionClosed = async (session: C2SSession) => {
    const sm = SmState.of(session);
    if (!sm) return;
    clearTimeout(sm.resumeTimer);
    clearTimeout(sm.ackRequest);
    try {
      await unacknowledged.settle(session, sm.queue.splice(0));
    } finally {
      deliveries.release(session);
    }
  };

  return { streamIn, userReceive, keep, sessionClosed, carrier: streamManagementCarrier(deliveries) };
}

export default defineModule({
  name: 'mod_stream_mgmt',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Stream management (XEP-0198): acknowledgements and session resumption',
  doc:
    'Clients that enable stream management (urn:xmpp:sm:3) get stanza acknowledgements both ways. With `resume`, a session whose connection drops stays ' +
    'online for up to `resume_timeout` seconds, its incoming stanzas queued; the client reconnects, resumes, and gets everything it had not acknowledged. ' +
    'When a session ends for good, each unacknowledged chat or normal message goes back to routing once, to the account\'s other resources or to offline storage, ' +
    'but never to a resource that already got it; carbon copies, groupchat, headlines and presence are dropped, and IQ requests are answered with service-unavailable. ' +
    'A failed resumption leaves the session to end when its timeout expires.',
  options: {
    resume_timeout: { type: 'integer', min: 1, default: 300, doc: 'Seconds a lost session waits to be resumed, when the client does not ask for less.' },
    max_resume_timeout: { type: 'integer', min: 1, default: 600, doc: 'The most a client may ask for with `max`.' },
    max_ack_queue: { type: 'integer', min: 10, default: 5000, doc: 'Unacknowledged stanzas kept per session; beyond, the stream is closed (resource-constraint).' },
  },
  start(ctx) {
    let options: Options = ctx.options;
    const sm = createStreamManagement(ctx.services, () => options);
    return {
      xmpp: {
        features: [{ build: () => x('sm', { xmlns: NS_SM }) }],
        middleware: [
          { chain: 'stream_in', handler: sm.streamIn, priority: 1 },
          // Innermost: counts and queues exactly what is written to the client.
          { chain: 'user_receive', handler: sm.userReceive, priority: 1000 },
        ],
        sessionKeepers: [sm.keep],
        sessionCarriers: [sm.carrier],
        disco: [{ scope: 'server', features: [NS_SM] }],
      },
      hooks: [{ hook: 'c2s_session_closed', handler: sm.sessionClosed }],
      reload(next) {
        options = next;
      },
    };
  },
});
