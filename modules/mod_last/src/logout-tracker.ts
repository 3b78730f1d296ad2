/**
 * Records last activity when an account's last session ends (c2s_session_closed runs after the session
 * was unregistered): while another session of the account remains, the account is still active and
 * nothing is stored.
 */
import type { C2SSession, SessionDirectory } from '@service/plugin-api';
import type { LastActivity } from './activity.js';

export function logoutTracker(activity: LastActivity, sessions: SessionDirectory): (session: C2SSession) => Promise<void> {
  return async (session) => {
    if (sessions.byAccount(session.account.bare).some((s) => s !== session && !s.closed)) return;
    await activity.record(
      { user: session.account.user!, host: session.account.host },
      // The status of the last broadcast presence: the unavailable one when the client said goodbye.
      { logoutAt: Date.now(), status: session.statusText },
    );
  };
}
