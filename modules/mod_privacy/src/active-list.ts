/** The active list of a session (XEP-0016 §2.3): it lives and dies with the session, never stored. */
import type { C2SSession, SessionStateCarrier } from '@service/plugin-api';

const STATE_KEY = 'mod_privacy';

interface PrivacySessionState {
  active: string | undefined;
}

export function activeListOf(session: C2SSession): string | undefined {
  return session.peekState<PrivacySessionState>(STATE_KEY)?.active;
}

export function setActiveList(session: C2SSession, name: string | undefined): void {
  session.state<PrivacySessionState>(STATE_KEY, () => ({ active: undefined })).active = name;
}

/** The active list stays active when the session moves to another node (a resumption there). */
export const activeListCarrier: SessionStateCarrier = {
  key: STATE_KEY,
  save: (session) => activeListOf(session),
  restore: (session, saved) => setActiveList(session, typeof saved === 'string' ? saved : undefined),
};
