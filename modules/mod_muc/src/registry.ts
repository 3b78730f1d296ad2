/**
 * The live rooms of every service, by room@service: found in memory or loaded from storage on first use,
 * created, dropped when a temporary room empties, put to rest (out of memory) when a persistent room has
 * nobody in it, and summarized for listings (resting rooms from storage). Every change of a room runs
 * under that room's lock, so that stanzas and MucApi calls for one room never interleave. A room that
 * archives loads its history from its archive, and an archiving room that goes takes its archive along.
 */
import { Jid, KeyedLock } from '@service/plugin-api';
import { archiveOf, forgetArchive } from './archive.js';
import type { MucEnv } from './context.js';
import { Room } from './room.js';
import { optionsFromStored } from './room-options.js';
import type { RoomOptions, RoomSummary } from './types.js';

/**
 * Where rooms may live, in a cluster (cluster-rooms.ts): whether this node holds a stored room (it owns it
 * or took it now), and that a room it held is gone. Alone, this node holds every room.
 */
export interface RoomPlacement {
  holds(bare: string): Promise<boolean>;
  released(bare: string): void;
}

const ALONE: RoomPlacement = { holds: () => Promise.resolve(true), released: () => {} };

export class RoomRegistry {
  readonly #rooms = new Map<string, Room>();
  readonly #lock = new KeyedLock();

  constructor(
    readonly env: MucEnv,
    private readonly placement: RoomPlacement = ALONE,
  ) {}

  /**
   * Runs `task` alone for the room (whether it exists or not). Then a persistent room with nobody in it
   * rests: it leaves memory, its state being stored, until a stanza or a call needs it again (as ejabberd
   * hibernates idle rooms). A server keeps thousands of such rooms at the cost of their rows.
   */
  withRoom<T>(name: string, service: string, task: () => Promise<T>): Promise<T> {
    const key = `${name}@${service}`;
    return this.#lock.run(key, async () => {
      try {
        return await task();
      } finally {
        this.#restIfIdle(key);
      }
    });
  }

  #restIfIdle(key: string): void {
    const room = this.#rooms.get(key);
    if (room && room.options.persistent && !room.locked && room.isEmpty()) this.#rooms.delete(key);
  }

  isService(service: string): boolean {
    return this.env.settings.services.includes(service.toLowerCase());
  }

  /** The room, live or loaded from storage; undefined when it does not exist. Call under the room's lock. */
  async get(name: string, service: string): Promise<Room | undefined> {
    const key = `${name}@${service}`;
    const live = this.#rooms.get(key);
    if (live) return live;
    const stored = await this.env.store.room(service, name, this.env.settings.historySize);
    if (!stored) return undefined;
    const room = new Room(name, service, optionsFromStored(stored.options, this.env.settings.defaultRoomOptions), this.env.settings.historySize, stored.createdAt, this.env.settings.hostOf(service));
    room.options.persistent = true;
    room.subject = stored.subject;
    room.subjectNick = stored.subjectNick;
    room.lastActivity = stored.lastActivity;
    for (const a of stored.affiliations) room.affiliations.set(a.jid, { affiliation: a.affiliation, reason: a.reason });
    for (const s of stored.subscribers) room.subscribers.set(s.jid, s);
    const archive = archiveOf(this.env, room);
    if (archive) room.history.restoreArchived(await archive.history(room.jid, this.env.settings.historySize), room.jid.bare);
    else room.history.restore(stored.history);
    this.#rooms.set(key, room);
    return room;
  }

  /** A new live room (not stored: the caller persists it when it is persistent). */
  create(name: string, service: string, options: RoomOptions): Room {
    const room = new Room(name, service, options, this.env.settings.historySize, this.env.now(), this.env.settings.hostOf(service));
    this.#rooms.set(`${name}@${service}`, room);
    return room;
  }

  /** Forgets a live room (destroyed, or temporary and empty), with its archive when it archives. */
  drop(room: Room): void {
    if (this.#rooms.get(room.jid.bare) !== room) return;
    this.#rooms.delete(room.jid.bare);
    this.placement.released(room.jid.bare);
    // In the background: nothing waits for it, and forgetArchive logs a failure. (A destroyed room's
    // archive went already, before its destroy was answered; this removes nothing more.)
    if (room.options.mam) void forgetArchive(this.env, room);
  }

  /** A temporary room with nobody in it and nobody subscribed goes away, as does a locked one its owner left. */
  dropIfDone(room: Room | undefined): void {
    if (room && room.isEmpty() && (room.locked || (!room.options.persistent && room.subscribers.size === 0))) this.drop(room);
  }

  live(): Room[] {
    return [...this.#rooms.values()];
  }

  /**
   * What listings show of every room of a service (or of all) this node holds: live rooms as they are
   * (locked ones left out with `unlockedOnly`), resting ones from storage (in a cluster: those this node
   * holds or takes now; with `everyStored`, every stored room, wherever it lives, as storage has it).
   */
  async summaries(service?: string, options: { unlockedOnly?: boolean; everyStored?: boolean } = {}): Promise<RoomSummary[]> {
    const out = new Map<string, RoomSummary>();
    for (const room of this.live()) {
      if ((service === undefined || room.service === service) && !(options.unlockedOnly && room.locked)) out.set(room.jid.bare, summaryOf(room));
    }
    const stored = await this.env.store.rooms(service);
    const resting = stored.filter((row) => !this.#rooms.has(`${row.name}@${row.service}`));
    if (resting.length === 0) return [...out.values()];
    const counts = await this.env.store.historyCounts(service);
    const archive = this.env.archive();
    for (const row of resting) {
      const bare = `${row.name}@${row.service}`;
      // Live meanwhile (a join while storage answered), or another node's: not this node's to list.
      if (out.has(bare) || this.#rooms.has(bare) || (!options.everyStored && !(await this.placement.holds(bare)))) continue;
      const roomOptions = optionsFromStored(row.options, this.env.settings.defaultRoomOptions);
      // A room that archives keeps its history in its archive (broadcast.ts), not in the stored history.
      const historyCount = roomOptions.mam && archive ? await archive.count(new Jid(row.name, row.service, undefined), this.env.settings.historySize) : (counts.get(bare) ?? 0);
      out.set(bare, {
        jid: bare,
        room: row.name,
        service: row.service,
        title: roomOptions.title,
        public: roomOptions.public,
        persistent: true,
        occupants: 0,
        historySize: Math.min(historyCount, this.env.settings.historySize),
        lastActivity: row.lastActivity,
        createdAt: row.createdAt,
      });
    }
    return [...out.values()];
  }

  conferencesOf(bare: string): number {
    return this.live().filter((r) => r.occupantsOf(bare).length > 0).length;
  }
}

export function summaryOf(room: Room): RoomSummary {
  return {
    jid: room.jid.bare,
    room: room.name,
    service: room.service,
    title: room.options.title,
    public: room.options.public,
    persistent: room.options.persistent,
    occupants: room.occupants.size,
    historySize: room.history.length,
    lastActivity: room.lastActivity,
    createdAt: room.createdAt,
  };
}
