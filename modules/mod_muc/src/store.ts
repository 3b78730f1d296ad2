/**
 * Persistent rooms in SQL: what a persistent room is made of (options, subject, affiliations, MUC/Sub
 * subscriptions, history, timestamps, its own vCard), written as it changes and read back when the room is first needed
 * after a start; and the nicks registered on each service. Temporary rooms never reach it.
 */
import { fromStoredXml, isUniqueViolation, toStoredXml, type Knex, type XmlElement } from '@service/plugin-api';
import { AFFILIATIONS_TABLE, HISTORY_TABLE, REGISTERED_TABLE, ROOMS_TABLE, SUBSCRIPTIONS_TABLE, VCARDS_TABLE } from './migrations.js';
import { nickKey } from './nick.js';
import type { AffiliationEntry, SubscriberInfo } from './types.js';

export interface StoredRoomRow {
  readonly service: string;
  readonly name: string;
  readonly options: string;
  readonly subject: string;
  readonly subjectNick: string;
  readonly createdAt: number;
  readonly lastActivity: number;
}

export interface StoredRoom extends StoredRoomRow {
  readonly affiliations: AffiliationEntry[];
  readonly subscribers: SubscriberInfo[];
  readonly history: Array<{ timestamp: number; message: XmlElement }>;
}

interface RoomRow {
  service: string;
  name: string;
  options: string;
  subject: string;
  subject_nick: string;
  created_at: number | string;
  last_activity: number | string;
}

export class NickTaken extends Error {}

export class MucStore {
  constructor(private readonly db: Knex) {}

  async rooms(service?: string): Promise<StoredRoomRow[]> {
    const query = this.db<RoomRow>(ROOMS_TABLE).select('*');
    if (service !== undefined) query.where({ service });
    return (await query).map(rowOf);
  }

  /** How many history messages each stored room of a service (or of all) has, by room@service. */
  async historyCounts(service?: string): Promise<Map<string, number>> {
    const query = this.db(HISTORY_TABLE).select('service', 'room').count({ n: '*' }).groupBy('service', 'room');
    if (service !== undefined) query.where({ service });
    const rows = (await query) as Array<{ service: string; room: string; n: number | string }>;
    return new Map(rows.map((r) => [`${r.room}@${r.service}`, Number(r.n)]));
  }

  async room(service: string, name: string, historyLimit: number): Promise<StoredRoom | undefined> {
    const row = await this.db<RoomRow>(ROOMS_TABLE).where({ service, name }).first();
    if (!row) return undefined;
    const affiliations = await this.db(AFFILIATIONS_TABLE).where({ service, room: name }).select('jid', 'affiliation', 'reason');
    const subscribers = await this.db(SUBSCRIPTIONS_TABLE).where({ service, room: name }).select('jid', 'nick', 'nodes');
    const history = historyLimit > 0 ? await this.db(HISTORY_TABLE).where({ service, room: name }).orderBy('id', 'desc').limit(historyLimit).select('created_at', 'xml') : [];
    return {
      ...rowOf(row),
      affiliations: affiliations.map((a: { jid: string; affiliation: AffiliationEntry['affiliation']; reason: string }) => ({ jid: a.jid, affiliation: a.affiliation, reason: a.reason })),
      subscribers: subscribers.map((s: { jid: string; nick: string; nodes: string }) => ({ jid: s.jid, nick: s.nick, nodes: parseNodes(s.nodes) })),
      history: history
        .reverse()
        .flatMap((h: { created_at: number | string; xml: string }) => {
          try {
            return [{ timestamp: Number(h.created_at), message: fromStoredXml(h.xml) }];
          } catch {
            return [];
          }
        }),
    };
  }

  /** Writes a room's own row (options, subject, timestamps). */
  async saveRoom(room: StoredRoomRow): Promise<void> {
    await this.db(ROOMS_TABLE)
      .insert({
        service: room.service,
        name: room.name,
        options: room.options,
        subject: room.subject,
        subject_nick: room.subjectNick,
        created_at: room.createdAt,
        last_activity: room.lastActivity,
      })
      .onConflict(['service', 'name'])
      .merge();
  }

  async touch(service: string, name: string, lastActivity: number): Promise<void> {
    await this.db(ROOMS_TABLE).where({ service, name }).update({ last_activity: lastActivity });
  }

  /** Replaces everything stored of a room (when it becomes persistent). */
  async saveAll(
    room: StoredRoomRow,
    affiliations: readonly AffiliationEntry[],
    subscribers: readonly SubscriberInfo[],
    history: ReadonlyArray<{ timestamp: number; message: XmlElement }>,
    vcard?: string,
  ): Promise<void> {
    await this.db.transaction(async (trx) => {
      const scoped = new MucStore(trx);
      await scoped.deleteRoom(room.service, room.name);
      await scoped.saveRoom(room);
      for (const a of affiliations) await scoped.setAffiliation(room.service, room.name, a);
      for (const s of subscribers) await scoped.setSubscription(room.service, room.name, s);
      for (const h of history) await scoped.addHistory(room.service, room.name, h.timestamp, h.message, 0);
      if (vcard !== undefined) await scoped.setRoomVcard(room.service, room.name, vcard);
    });
  }

  async deleteRoom(service: string, name: string): Promise<void> {
    await this.db(ROOMS_TABLE).where({ service, name }).delete();
    await this.db(AFFILIATIONS_TABLE).where({ service, room: name }).delete();
    await this.db(SUBSCRIPTIONS_TABLE).where({ service, room: name }).delete();
    await this.db(HISTORY_TABLE).where({ service, room: name }).delete();
    await this.db(VCARDS_TABLE).where({ service, room: name }).delete();
  }

  /** A room's own vCard (stored XML), if it has one. */
  async roomVcard(service: string, room: string): Promise<string | undefined> {
    const row = await this.db(VCARDS_TABLE).where({ service, room }).first('xml');
    return (row as { xml: string } | undefined)?.xml;
  }

  async setRoomVcard(service: string, room: string, xml: string): Promise<void> {
    await this.db(VCARDS_TABLE).insert({ service, room, xml }).onConflict(['service', 'room']).merge();
  }

  async removeRoomVcard(service: string, room: string): Promise<void> {
    await this.db(VCARDS_TABLE).where({ service, room }).delete();
  }

  async setAffiliation(service: string, room: string, entry: AffiliationEntry): Promise<void> {
    await this.db(AFFILIATIONS_TABLE)
      .insert({ service, room, jid: entry.jid, affiliation: entry.affiliation, reason: entry.reason })
      .onConflict(['service', 'room', 'jid'])
      .merge();
  }

  async removeAffiliation(service: string, room: string, jid: string): Promise<void> {
    await this.db(AFFILIATIONS_TABLE).where({ service, room, jid }).delete();
  }

  async setSubscription(service: string, room: string, subscriber: SubscriberInfo): Promise<void> {
    await this.db(SUBSCRIPTIONS_TABLE)
      .insert({ service, room, jid: subscriber.jid, nick: subscriber.nick, nodes: JSON.stringify(subscriber.nodes) })
      .onConflict(['service', 'room', 'jid'])
      .merge();
  }

  async removeSubscription(service: string, room: string, jid: string): Promise<void> {
    await this.db(SUBSCRIPTIONS_TABLE).where({ service, room, jid }).delete();
  }

  /** Appends a message to a room's stored history and keeps only the last `keep` (0: keep all). */
  async addHistory(service: string, room: string, timestamp: number, message: XmlElement, keep: number): Promise<void> {
    await this.db(HISTORY_TABLE).insert({ service, room, created_at: timestamp, xml: toStoredXml(message) });
    if (keep <= 0) return;
    const cutoff = await this.db(HISTORY_TABLE).where({ service, room }).orderBy('id', 'desc').offset(keep).limit(1).select('id');
    if (cutoff.length) await this.db(HISTORY_TABLE).where({ service, room }).andWhere('id', '<=', (cutoff[0] as { id: number }).id).delete();
  }

  async registeredNick(service: string, jid: string): Promise<string | undefined> {
    const row = await this.db(REGISTERED_TABLE).where({ service, jid }).first('nick');
    return (row as { nick: string } | undefined)?.nick;
  }

  /** Who registered `nick` on the service, in any case or width (its nickKey). */
  async nickOwner(service: string, nick: string): Promise<string | undefined> {
    const row = await this.db(REGISTERED_TABLE)
      .where({ service })
      .andWhere((q) => q.where({ nick_key: nickKey(nick) }).orWhere((old) => old.whereNull('nick_key').andWhere({ nick })))
      .first('jid');
    return (row as { jid: string } | undefined)?.jid;
  }

  /** Registers (or changes) an account's nick; NickTaken when another account holds it. */
  async registerNick(service: string, jid: string, nick: string): Promise<void> {
    const owner = await this.nickOwner(service, nick);
    if (owner !== undefined && owner !== jid) throw new NickTaken(nick);
    try {
      await this.db.transaction(async (trx) => {
        await trx(REGISTERED_TABLE).where({ service, jid }).delete();
        await trx(REGISTERED_TABLE).insert({ service, jid, nick, nick_key: nickKey(nick) });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new NickTaken(nick);
      throw err;
    }
  }

  /** Removes an account's nick; false when it had none. */
  async unregisterNick(service: string, jid: string): Promise<boolean> {
    return (await this.db(REGISTERED_TABLE).where({ service, jid }).delete()) > 0;
  }

  async removeRegisteredNicks(jid: string): Promise<void> {
    await this.db(REGISTERED_TABLE).where({ jid }).delete();
  }

  async subscriptionsOf(jid: string): Promise<Array<{ service: string; room: string; nick: string; nodes: string[] }>> {
    const rows = await this.db(SUBSCRIPTIONS_TABLE).where({ jid }).select('service', 'room', 'nick', 'nodes');
    return rows.map((r: { service: string; room: string; nick: string; nodes: string }) => ({ service: r.service, room: r.room, nick: r.nick, nodes: parseNodes(r.nodes) }));
  }
}

function rowOf(row: RoomRow): StoredRoomRow {
  return {
    service: row.service,
    name: row.name,
    options: row.options,
    subject: row.subject,
    subjectNick: row.subject_nick,
    createdAt: Number(row.created_at),
    lastActivity: Number(row.last_activity),
  };
}

function parseNodes(json: string): string[] {
  try {
    const parsed = JSON.parse(json) as string[];
    return Array.isArray(parsed) ? parsed.filter((n) => typeof n === 'string') : [];
  } catch {
    return [];
  }
}
