/**
 * What room archives need of the archive table beyond ArchiveStore (store.ts): a room's last messages for
 * its history and a capped count for listings (neither counts the whole archive), removing a room's
 * archive up to a time, and the purge of one virtual host's room archives. A room archive is stored as an account's is,
 * under owner = the conference service (host) and the room's name (username), with kind 'groupchat'.
 */
import { ParseError, deletePicked, fromStoredXml, type AccountKey, type ModuleContext, type XmlElement } from '@service/plugin-api';
import { MAM_TABLE } from './migrations.js';

type Db = ModuleContext['db'];

export interface ArchivedRoomMessage {
  readonly stanzaId: string;
  readonly createdAt: number;
  readonly stanza: XmlElement;
}

export class RoomArchiveStore {
  constructor(private readonly db: Db) {}

  /** The room's last `limit` archived messages, oldest first; rows whose XML no longer parses are left out. */
  async latest(room: AccountKey, limit: number): Promise<ArchivedRoomMessage[]> {
    if (limit <= 0) return [];
    const rows: Array<{ stanza_id: string; created_at: number | string; xml: string }> = await this.#room(room)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .select('stanza_id', 'created_at', 'xml');
    return rows.reverse().flatMap((row) => {
      try {
        return [{ stanzaId: row.stanza_id, createdAt: Number(row.created_at), stanza: fromStoredXml(row.xml) }];
      } catch (err) {
        if (!(err instanceof ParseError)) throw err;
        return [];
      }
    });
  }

  /** How many messages the room's archive holds, up to `limit`: a large archive is not counted through. */
  async countUpTo(room: AccountKey, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    const row: { count?: number | string } | undefined = await this.db.count({ count: '*' }).from(this.#room(room).select('id').limit(limit).as('kept')).first();
    return Number(row?.count ?? 0);
  }

  /** Removes the room's archived messages stored at or before `before` (ms); returns how many went. */
  async removeRoom(room: AccountKey, before: number): Promise<number> {
    return this.#room(room).andWhere('created_at', '<=', before).delete();
  }

  /**
   * At most `limit` of the oldest room messages stored before `before` (ms) of the rooms of `vhost`'s
   * conference services, which are its subdomains (conference.@HOST@ and the like: the table keeps the
   * service, not the virtual host it serves); returns how many went.
   */
  async deleteOldestOfHost(before: number, limit: number, vhost: string): Promise<number> {
    if (limit <= 0) return 0;
    // Read along the created_at index, not a scan of every row for the services' names: `host` ends with
    // '.<vhost>' (LIKE's wildcards in the name escaped with '!', which all three databases accept).
    const pattern = `%.${vhost.replace(/[!%_]/g, (c) => `!${c}`)}`;
    const pick = this.db(MAM_TABLE).where('created_at', '<', before).andWhere('kind', 'groupchat').andWhereRaw("?? like ? escape '!'", ['host', pattern]).orderBy('created_at').limit(limit);
    return deletePicked(this.db, MAM_TABLE, pick);
  }

  #room(room: AccountKey) {
    return this.db(MAM_TABLE).where({ host: room.host, username: room.user, kind: 'groupchat' });
  }
}
