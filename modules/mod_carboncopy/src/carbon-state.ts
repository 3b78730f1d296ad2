/** Whether a session enabled carbons: per session, so it ends with the session (XEP-0280 §3). */
import type { C2SSession, SessionStateCarrier } from '@service/plugin-api';

const STATE_KEY = 'mod_carboncopy';

interface CarbonState {
  enabled: boolean;
}

export function setCarbons(session: C2SSession, enabled: boolean): void {
  session.state<CarbonState>(STATE_KEY, () => ({ enabled: false })).enabled = enabled;
}

export function carbonsEnabled(session: C2SSession): boolean {
  return session.peekState<CarbonState>(STATE_KEY)?.enabled === true;
}

/** Carbons stay enabled when the session moves to another node (a resumption there). */
export const carbonsCarrier: SessionStateCarrier = {
  key: STATE_KEY,
  save: (session) => (carbonsEnabled(session) ? true : undefined),
  restore: (session, saved) => setCarbons(session, saved === true),
};
