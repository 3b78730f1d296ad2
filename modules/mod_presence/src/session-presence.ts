/**
 * What mod_presence remembers per session (it lives and dies with the session): whether the session's
 * availability was announced to its subscribers, and the entities it sent directed presence to (RFC 6121
 * §4.6), which must hear that it goes unavailable.
 */
import type { C2SSession, Jid } from '@service/plugin-api';

export interface SessionPresence {
  /** Available presence was broadcast and no unavailable since: subscribers must be told when it ends. */
  announced: boolean;
  /** Recipients of directed available presence, by full (or bare) JID. */
  readonly directed: Map<string, Jid>;
}

const STATE_KEY = 'mod_presence';

export function presenceOf(session: C2SSession): SessionPresence {
  return session.state<SessionPresence>(STATE_KEY, () => ({ announced: false, directed: new Map() }));
}
