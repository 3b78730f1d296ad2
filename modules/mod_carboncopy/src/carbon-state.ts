/** Whether a session enabled carbons: per session, so it ends with the session (XEP-0280 §3). */
import type { C2SSession } from '@service/plugin-api';

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
