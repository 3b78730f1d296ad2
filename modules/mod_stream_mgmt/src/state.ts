/**
 * Stream management state of one session (XEP-0198): the counters of handled stanzas both ways and the
 * queue of stanzas sent but not yet acknowledged. Counters wrap at 2^32, as the XEP says.
 */
import type { C2SSession, XmlElement } from '@service/plugin-api';

export const NS_SM = 'urn:xmpp:sm:3';
/** The session-state keys of the module: its SmState, and the resumption timeout granted (seconds). */
export const SM_STATE_KEY = 'stream_mgmt';
export const SM_MAX_KEY = 'stream_mgmt_max';
const WRAP = 2 ** 32;

export class SmState {
  enabled = false;
  resumable = false;
  /** Stanzas received from the client and handled. */
  inbound = 0;
  /** Stanzas sent to the client. */
  outbound = 0;
  /** Sent and not acknowledged, oldest first; the first is number `outbound - queue.length + 1`. */
  readonly queue: XmlElement[] = [];
  /** Set while the session is detached, waiting to be resumed. */
  resumeTimer: NodeJS.Timeout | undefined;
  /** A pending <r/> to the client. */
  ackRequest: NodeJS.Timeout | undefined;

  static of(session: C2SSession): SmState | undefined {
    return session.peekState<SmState>(SM_STATE_KEY);
  }

  static enable(session: C2SSession): SmState {
    return session.state(SM_STATE_KEY, () => new SmState());
  }

  countInbound(): void {
    this.inbound = (this.inbound + 1) % WRAP;
  }

  sent(stanza: XmlElement): void {
    this.outbound = (this.outbound + 1) % WRAP;
    this.queue.push(stanza);
  }

  /**
   * The client acknowledged `h` stanzas in all: drops them from the queue. Returns false when `h` counts
   * more than was sent (the XEP's handled-count-too-high).
   */
  acknowledge(h: number): boolean {
    const unackedBefore = this.queue.length;
    const firstUnacked = (this.outbound - unackedBefore + WRAP) % WRAP;
    const newlyAcked = (h - firstUnacked + WRAP) % WRAP;
    if (newlyAcked > unackedBefore) return false;
    this.queue.splice(0, newlyAcked);
    return true;
  }
}
