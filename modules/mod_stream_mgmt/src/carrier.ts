/**
 * Stream management's state of a session that moves to another node of a cluster, for a resumption there:
 * the counters, the queue of what the client has not acknowledged (sent again from the new node) and the
 * resumption timeout the client was granted. Only a resumable session moves. Leaving, its timers stop and
 * its queue empties here, so the old node neither sends nor settles any of it, and keeps no record of it.
 */
import { fromStoredXml, toStoredXml, type MovableValue, type SessionStateCarrier } from '@service/plugin-api';
import type { Deliveries } from './deliveries.js';
import { SM_MAX_KEY, SM_STATE_KEY, SmState } from './state.js';

interface SavedSm {
  inbound: number;
  outbound: number;
  max: number | null;
  queue: string[];
}

export const streamManagementCarrier = (deliveries: Deliveries): SessionStateCarrier => ({
  key: SM_STATE_KEY,
  movable: (session) => {
    const sm = SmState.of(session);
    return sm !== undefined && sm.enabled && sm.resumable;
  },
  save: (session) => {
    const sm = SmState.of(session);
    if (!sm) return undefined;
    clearTimeout(sm.resumeTimer);
    clearTimeout(sm.ackRequest);
    sm.resumeTimer = sm.ackRequest = undefined;
    deliveries.release(session);
    const saved: SavedSm = {
      inbound: sm.inbound,
      outbound: sm.outbound,
      max: session.peekState<number>(SM_MAX_KEY) ?? null,
      queue: sm.queue.splice(0).map(toStoredXml),
    };
    return saved as unknown as MovableValue;
  },
  restore: (session, value) => {
    const saved = value as unknown as SavedSm;
    const sm = SmState.enable(session);
    sm.enabled = true;
    sm.resumable = true;
    sm.inbound = saved.inbound;
    sm.outbound = saved.outbound;
    for (const stored of saved.queue) sm.queue.push(fromStoredXml(stored));
    if (typeof saved.max === 'number') session.state(SM_MAX_KEY, () => saved.max as number);
  },
});
