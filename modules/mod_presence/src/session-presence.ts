/**
 * What mod_presence remembers per session (it lives and dies with the session): whether the session's
 * availability was announced to its subscribers, and the entities it sent directed presence to (RFC 6121
 * §4.6), which must hear that it goes unavailable.
 */
import { Jid, type C2SSession, type SessionStateCarrier } from '@service/plugin-api';

export interface SessionPresence {
  /** Available presence was broadcast and no unavailable since: subscribers must be told when it ends. */
  announced: boolean;
  /**
   * Recipients of directed available presence, by full (or bare) JID; made at the first (most sessions never
   * send one, and an idle session should not carry an empty map).
   */
  directed?: Map<string, Jid>;
}

const STATE_KEY = 'mod_presence';

export function presenceOf(session: C2SSession): SessionPresence {
  return session.state<SessionPresence>(STATE_KEY, () => ({ announced: false }));
}

/**
 * What was announced moves with the session to another node (a resumption there): its subscribers and the
 * recipients of its directed presence still hear when it goes unavailable, from the new node.
 */
export const sessionPresenceCarrier: SessionStateCarrier = {
  key: STATE_KEY,
  save: (session) => {
    const state = session.peekState<SessionPresence>(STATE_KEY);
    return state ? { announced: state.announced, directed: [...(state.directed?.keys() ?? [])] } : undefined;
  },
  restore: (session, saved) => {
    if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) return;
    const state = presenceOf(session);
    state.announced = saved.announced === true;
    for (const jid of Array.isArray(saved.directed) ? saved.directed : []) {
      const parsed = typeof jid === 'string' ? Jid.tryParse(jid) : undefined;
      if (parsed) (state.directed ??= new Map()).set(jid as string, parsed);
    }
  },
};
