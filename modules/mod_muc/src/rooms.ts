/**
 * MucRooms: the one door to every room's state. Stanzas to the conference domains (`handleStanza`) and
 * MucApi calls (the methods of MucApi) are its only public ways in, so that a process that does not host
 * the rooms can forward both to the one that does (a cluster mechanism proxies this class).
 */
import { x, type Jid, type XmlElement } from '@service/plugin-api';
import { shutdownRoom } from './actions.js';
import type { MucEnv } from './context.js';
import { dispatchStanza } from './dispatch.js';
import { RoomRegistry, type RoomPlacement } from './registry.js';
import { MucService } from './service.js';
import type { Affiliation, AffiliationEntry, HistoryEntry, MucApi, OccupantInfo, RoomCreation, RoomOptions, RoomSummary, SubscriberInfo } from './types.js';

export class MucRooms implements MucApi {
  readonly #registry: RoomRegistry;
  readonly #api: MucService;

  constructor(env: MucEnv, placement?: RoomPlacement) {
    this.#registry = new RoomRegistry(env, placement);
    this.#api = new MucService(this.#registry);
  }

  /** A stanza to a conference domain (the service, a room, an occupant). Never throws. */
  handleStanza(stanza: XmlElement, from: Jid, to: Jid): Promise<void> {
    return dispatchStanza(this.#registry, stanza, from, to);
  }

  /**
   * A client session ended: it leaves every room it is in, as with an unavailable presence (mod_presence
   * usually sends one first; then there is nothing left to do here).
   */
  async sessionClosed(full: Jid): Promise<void> {
    for (const room of this.#registry.live()) {
      const occupant = room.occupantBySession(full.full);
      if (!occupant) continue;
      const to = room.jid.withResource(occupant.nick);
      await this.handleStanza(x('presence', { from: full.full, to: to.full, type: 'unavailable' }), full, to);
    }
  }

  /** An account was removed: its registered nicks and MUC/Sub subscriptions go. */
  async accountRemoved(bare: string): Promise<void> {
    for (const subscription of await this.#registry.env.store.subscriptionsOf(bare)) {
      await this.#api.unsubscribe(subscription.room, subscription.service, bare).catch(() => undefined);
    }
    for (const room of this.#registry.live()) {
      if (room.subscribers.has(bare)) await this.#api.unsubscribe(room.name, room.service, bare).catch(() => undefined);
    }
    await this.#registry.env.store.removeRegisteredNicks(bare);
  }

  /** The module stops: every occupant hears that its room goes away for now (332). */
  async shutdown(): Promise<void> {
    for (const room of this.#registry.live()) {
      await this.#registry.withRoom(room.name, room.service, () => shutdownRoom(this.#registry.env, room));
    }
  }

  services(): string[] {
    return this.#api.services();
  }
  isService(service: string): boolean {
    return this.#api.isService(service);
  }
  rooms(service?: string): Promise<RoomSummary[]> {
    return this.#api.rooms(service);
  }
  room(room: string, service: string): Promise<RoomSummary | undefined> {
    return this.#api.room(room, service);
  }
  createRoom(room: string, service: string, creation?: RoomCreation): Promise<void> {
    return this.#api.createRoom(room, service, creation);
  }
  destroyRoom(room: string, service: string, options?: { reason?: string; alternate?: string }): Promise<void> {
    return this.#api.destroyRoom(room, service, options);
  }
  options(room: string, service: string): Promise<RoomOptions> {
    return this.#api.options(room, service);
  }
  setOption(room: string, service: string, name: string, value: string): Promise<void> {
    return this.#api.setOption(room, service, name, value);
  }
  affiliation(room: string, service: string, jid: string): Promise<Affiliation> {
    return this.#api.affiliation(room, service, jid);
  }
  affiliations(room: string, service: string): Promise<AffiliationEntry[]> {
    return this.#api.affiliations(room, service);
  }
  setAffiliation(room: string, service: string, jid: string, affiliation: Affiliation, reason?: string): Promise<void> {
    return this.#api.setAffiliation(room, service, jid, affiliation, reason);
  }
  occupants(room: string, service: string): Promise<OccupantInfo[]> {
    return this.#api.occupants(room, service);
  }
  history(room: string, service: string): Promise<HistoryEntry[]> {
    return this.#api.history(room, service);
  }
  subscribers(room: string, service: string): Promise<SubscriberInfo[]> {
    return this.#api.subscribers(room, service);
  }
  subscribe(room: string, service: string, jid: string, nick: string, nodes: readonly string[]): Promise<string[]> {
    return this.#api.subscribe(room, service, jid, nick, nodes);
  }
  unsubscribe(room: string, service: string, jid: string): Promise<void> {
    return this.#api.unsubscribe(room, service, jid);
  }
  userRooms(bare: string): Promise<string[]> {
    return this.#api.userRooms(bare);
  }
  userSubscriptions(bare: string): Promise<Array<{ room: string; nick: string; nodes: string[] }>> {
    return this.#api.userSubscriptions(bare);
  }
  registerNick(service: string, bare: string, nick: string): Promise<void> {
    return this.#api.registerNick(service, bare, nick);
  }
  unregisterNick(service: string, bare: string): Promise<void> {
    return this.#api.unregisterNick(service, bare);
  }
  inviteDirect(room: string, service: string, users: readonly Jid[], options: { password?: string; reason?: string }): Promise<void> {
    return this.#api.inviteDirect(room, service, users, options);
  }
  sendGroupchat(room: string, service: string, from: Jid, message: XmlElement): Promise<void> {
    return this.#api.sendGroupchat(room, service, from, message);
  }
}
