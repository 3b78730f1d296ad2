/**
 * What the cluster's session directory holds for a session: enough for another node to route to it and to
 * answer the session commands (connected_users_info…) without asking the node that carries it.
 */
import type { C2SSession, ConnectionKind } from '@service/plugin-api';
import { toStoredXml } from '@service/plugin-api';

export interface SessionRecord {
  readonly node: string;
  readonly id: string;
  readonly started: number;
  readonly connection: ConnectionKind;
  readonly ip: string;
  readonly port: number;
  readonly priority: number;
  readonly available: boolean;
  readonly show: string;
  readonly status: string;
  /** The last broadcast presence, as stored XML. */
  readonly presence?: string;
}

export function recordOf(session: C2SSession, node: string): SessionRecord {
  return {
    node,
    id: session.id,
    started: session.startedAt,
    connection: session.connection,
    ip: session.ip,
    port: session.port,
    priority: session.priority,
    available: session.available,
    show: session.show,
    status: session.statusText,
    ...(session.presence ? { presence: toStoredXml(session.presence) } : {}),
  };
}
