/**
 * Block and unblock pushes (XEP-0191 §§3.3–3.5): an IQ set to each resource of the account that asked for
 * the blocklist in this session — the others do not keep one and would not know what to do with it.
 */
import { randomHex, x, type C2SSession, type Jid, type RouterApi, type SessionDirectory, type SessionStateCarrier } from '@service/plugin-api';
import { NS_BLOCKING } from './ns.js';

const STATE_KEY = 'mod_blocking';

interface BlockingSessionState {
  requestedList: boolean;
}

export function markListRequested(session: C2SSession): void {
  session.state<BlockingSessionState>(STATE_KEY, () => ({ requestedList: false })).requestedList = true;
}

function requestedList(session: C2SSession): boolean {
  return session.peekState<BlockingSessionState>(STATE_KEY)?.requestedList === true;
}

/** A session that asked for the blocklist still gets pushes after it moved to another node (a resumption there). */
export const blocklistInterestCarrier: SessionStateCarrier = {
  key: STATE_KEY,
  save: (session) => (requestedList(session) ? true : undefined),
  restore: (session, saved) => {
    if (saved === true) markListRequested(session);
  },
};

export class BlocklistPushes {
  constructor(
    private readonly sessions: SessionDirectory,
    private readonly router: RouterApi,
  ) {}

  /** `jids` empty with 'unblock': everything was unblocked. */
  async push(account: Jid, change: 'block' | 'unblock', jids: readonly string[]): Promise<void> {
    for (const session of await this.sessions.byAccount(account.bare)) {
      if (session.closed || !requestedList(session)) continue;
      const push = x(
        'iq',
        { type: 'set', id: `push-${randomHex(6)}`, from: account.bare, to: session.jid.full },
        x(change, { xmlns: NS_BLOCKING }, ...jids.map((jid) => x('item', { jid }))),
      );
      await this.router.deliverToSession(session, push);
    }
  }
}
