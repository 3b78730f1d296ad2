/**
 * Records last activity when an account's last session ends (c2s_session_closed runs after the session
 * was unregistered): while another session of the account remains, the account is still active and
 * nothing is stored.
 *
 * The session lookup is asynchronous, so two sessions of one account ending close together could both
 * find no other session left and both record. The ends of an account's sessions are handled one at a
 * time, in the order they ended, with the time each ended: the last one to end is the one stored.
 */
import { KeyedLock, type C2SSession, type SessionDirectory } from '@service/plugin-api';
import type { LastActivity } from './activity.js';

export function logoutTracker(activity: LastActivity, sessions: SessionDirectory): (session: C2SSession) => Promise<void> {
  const accounts = new KeyedLock();
  return (session) => {
    const logoutAt = Date.now();
    return accounts.run(session.account.bare, async () => {
      if ((await sessions.byAccount(session.account.bare)).some((s) => s !== session && !s.closed)) return;
      await activity.record(
        { user: session.account.user!, host: session.account.host },
        // The status of the last broadcast presence: the unavailable one when the client said goodbye.
        { logoutAt, status: session.statusText },
      );
    });
  };
}
