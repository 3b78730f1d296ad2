/**
 * Group chat over the nodes of a cluster (NodesApi): a room lives on one node, its owner, and the other
 * nodes hand it what their clients send it. The owner of `mod_muc:<room>@<service>` is whichever node first
 * needed the room (the room is then created there, or loaded from storage); it keeps it while it runs and
 * gives it up when the room goes (destroyed, or temporary and empty). When the owner dies, the next node
 * that needs the room takes it over from its stored state (persistent rooms: options, affiliations,
 * subscriptions, history); the occupants this node had in it hear that the room went away (332) and join
 * again, which gives them the room on its new node.
 *
 * The ways in are the same as under workers (process-proxy.ts): `mod_muc.stanza` for a stanza to a room,
 * `mod_muc.api` for a MucApi call about one room, `mod_muc.event` for what the hooks saw. Calls about one
 * room keep their order (the room's key orders them on the owner). Listings ask every live node and merge.
 * Without a cluster (NodesApi.clustered() false) everything runs here, as on a single server.
 */
import { KeyedLock, Jid, StanzaError, treeOf, x, type ChannelValue, type NodesApi, type XmlElement } from '@service/plugin-api';
import { NS_MUC_USER } from './ns.js';
import { API_CHANNEL, EVENT_CHANNEL, STANZA_CHANNEL, remoteMucApi, type Payload } from './process-proxy.js';
import type { MucRooms } from './rooms.js';
import type { Affiliation, HistoryEntry, MucApi, OccupantInfo, RoomCreation, RoomOptions, RoomSummary, SubscriberInfo, AffiliationEntry } from './types.js';

/** The NodesApi key of a room (room@service, prepared). */
export function roomKey(bare: string): string {
  return `mod_muc:${bare}`;
}

/** How often a stanza may be handed on between nodes before the node that has it handles it. */
const MAX_HOPS = 2;

/** A session of this node in a room of another node, as far as its presences tell. */
interface RemoteSeat {
  readonly node: string;
  readonly nick: string;
}

export class ClusteredRooms implements MucApi {
  readonly #order = new KeyedLock();
  /** room@service → this node's sessions (full JID) in it while another node holds it. */
  readonly #seats = new Map<string, Map<string, RemoteSeat>>();

  constructor(
    private readonly local: MucRooms,
    private readonly nodes: NodesApi,
    private readonly route: (stanza: XmlElement) => Promise<void>,
    private readonly bounce: (stanza: XmlElement, error: StanzaError) => Promise<void>,
  ) {}

  /** A stanza to a conference domain: the service's own here; a room's (or an occupant's) where the room lives. */
  handleStanza(stanza: XmlElement, from: Jid, to: Jid, hops = 0): Promise<void> {
    if (!this.nodes.clustered() || to.user === undefined) return this.local.handleStanza(stanza, from, to);
    const key = roomKey(to.bare);
    return this.#order.run(key, async () => {
      const owner = await this.nodes.owner(key).catch(() => this.nodes.self);
      if (owner === this.nodes.self || hops >= MAX_HOPS) return this.local.handleStanza(stanza, from, to);
      this.#seat(stanza, from, to, owner);
      // Not awaited: the next stanza for the room goes out behind this one, and the room answers the sender itself.
      this.nodes.call(owner, STANZA_CHANNEL, { stanza: treeOf(stanza) as unknown as ChannelValue, hops: hops + 1 }, key).catch((err: Error) => {
        if (this.nodes.live().includes(owner)) return this.bounce(stanza, new StanzaError('service-unavailable', `the room ${to.bare} cannot be reached now`));
        // The owner died meanwhile: the room goes to whoever asks next, which is this node now.
        return this.handleStanza(stanza, from, to, hops).catch(() => this.bounce(stanza, new StanzaError('service-unavailable', `the room ${to.bare} cannot be reached now: ${err.message}`)));
      });
    });
  }

  /** Remembers which rooms of other nodes this node's sessions joined, to tell them if that node dies. */
  #seat(stanza: XmlElement, from: Jid, to: Jid, node: string): void {
    if (stanza.name !== 'presence' || to.resource === undefined) return;
    const type = stanza.attr('type');
    let seats = this.#seats.get(to.bare);
    if (type === 'unavailable' || type === 'error') {
      seats?.delete(from.full);
      if (seats?.size === 0) this.#seats.delete(to.bare);
      return;
    }
    if (type !== undefined) return;
    if (!seats) this.#seats.set(to.bare, (seats = new Map()));
    seats.set(from.full, { node, nick: to.resource });
  }

  /**
   * A node died or left: this node's sessions in its rooms hear that they are out (332, as when a service
   * shuts down), so their clients join again, which brings the room up on a live node.
   */
  async nodeDown(node: string): Promise<void> {
    for (const [room, seats] of this.#seats) {
      for (const [full, seat] of seats) {
        if (seat.node !== node) continue;
        seats.delete(full);
        await this.route(
          x('presence', { from: `${room}/${seat.nick}`, to: full, type: 'unavailable' }, x('x', { xmlns: NS_MUC_USER }, x('item', { affiliation: 'none', role: 'none' }), x('status', { code: '332' }))),
        ).catch(() => undefined);
      }
      if (seats.size === 0) this.#seats.delete(room);
    }
  }

  /**
   * A session ended: every room it was in lets it go. A session of this node joined other nodes' rooms
   * through this node (its seats), so only those nodes are told: a logout costs no call to nodes whose
   * rooms it never entered. A session this node did not carry (a dead node's, which this node cleans up
   * after) may have been anywhere: every node is told.
   */
  async sessionClosed(full: Jid, carriedHere = true): Promise<void> {
    const seated = new Set<string>();
    for (const seats of this.#seats.values()) {
      const seat = seats.get(full.full);
      if (seat) seated.add(seat.node);
      seats.delete(full.full);
    }
    const event = { event: 'session-closed', jid: full.full };
    await this.#tell(carriedHere ? [...seated] : this.#others(), event, () => this.local.sessionClosed(full));
  }

  /** An account was removed: every node's rooms forget it. */
  accountRemoved(bare: string): Promise<void> {
    return this.#tell(this.#others(), { event: 'account-removed', bare }, () => this.local.accountRemoved(bare));
  }

  #others(): string[] {
    return this.nodes.live().filter((node) => node !== this.nodes.self);
  }

  async #tell(nodes: readonly string[], event: Payload, here: () => Promise<void>): Promise<void> {
    await here();
    if (!this.nodes.clustered()) return;
    await Promise.all(nodes.map((node) => this.nodes.call(node, EVENT_CHANNEL, event).catch(() => undefined)));
  }

  // MucApi: a room's calls run where the room lives; listings gather every node's rooms.

  /** The MucApi of the room's owner (this node's own when it owns the room or nobody else runs). */
  async #at(room: string, service: string): Promise<MucApi> {
    if (!this.nodes.clustered()) return this.local;
    const jid = Jid.tryParse(`${room}@${service}`);
    // A name that is not a room's is refused by the local rooms with the right error.
    if (!jid || jid.user === undefined || jid.resource !== undefined) return this.local;
    const key = roomKey(jid.bare);
    const owner = await this.nodes.owner(key);
    if (owner === this.nodes.self) return this.local;
    return remoteMucApi((call) => this.nodes.call(owner, API_CHANNEL, call, key), this.local);
  }

  /** Every live node's answer to a listing, this node's first. */
  async #gather<T>(method: keyof MucApi, args: ChannelValue[], here: () => Promise<T[]>): Promise<T[]> {
    const mine = await here();
    if (!this.nodes.clustered()) return mine;
    const others = this.nodes.live().filter((node) => node !== this.nodes.self);
    const theirs = await Promise.all(others.map((node) => this.nodes.call(node, API_CHANNEL, { method, args }).then((answer) => answer as unknown as T[], () => [] as T[])));
    return [...mine, ...theirs.flat()];
  }

  services(): string[] {
    return this.local.services();
  }
  isService(service: string): boolean {
    return this.local.isService(service);
  }
  async rooms(service?: string): Promise<RoomSummary[]> {
    const all = await this.#gather('rooms', [service ?? null], () => this.local.rooms(service));
    return uniqueBy(all, (room) => room.jid).sort((a, b) => (a.jid < b.jid ? -1 : a.jid > b.jid ? 1 : 0));
  }
  async room(room: string, service: string): Promise<RoomSummary | undefined> {
    return (await this.#at(room, service)).room(room, service);
  }
  async createRoom(room: string, service: string, creation?: RoomCreation): Promise<void> {
    return (await this.#at(room, service)).createRoom(room, service, creation);
  }
  async destroyRoom(room: string, service: string, options?: { reason?: string; alternate?: string }): Promise<void> {
    return (await this.#at(room, service)).destroyRoom(room, service, options);
  }
  async options(room: string, service: string): Promise<RoomOptions> {
    return (await this.#at(room, service)).options(room, service);
  }
  async setOption(room: string, service: string, name: string, value: string): Promise<void> {
    return (await this.#at(room, service)).setOption(room, service, name, value);
  }
  async affiliation(room: string, service: string, jid: string): Promise<Affiliation> {
    return (await this.#at(room, service)).affiliation(room, service, jid);
  }
  async affiliations(room: string, service: string): Promise<AffiliationEntry[]> {
    return (await this.#at(room, service)).affiliations(room, service);
  }
  async setAffiliation(room: string, service: string, jid: string, affiliation: Affiliation, reason?: string): Promise<void> {
    return (await this.#at(room, service)).setAffiliation(room, service, jid, affiliation, reason);
  }
  async occupants(room: string, service: string): Promise<OccupantInfo[]> {
    return (await this.#at(room, service)).occupants(room, service);
  }
  async history(room: string, service: string): Promise<HistoryEntry[]> {
    return (await this.#at(room, service)).history(room, service);
  }
  async subscribers(room: string, service: string): Promise<SubscriberInfo[]> {
    return (await this.#at(room, service)).subscribers(room, service);
  }
  async subscribe(room: string, service: string, jid: string, nick: string, nodes: readonly string[]): Promise<string[]> {
    return (await this.#at(room, service)).subscribe(room, service, jid, nick, nodes);
  }
  async unsubscribe(room: string, service: string, jid: string): Promise<void> {
    return (await this.#at(room, service)).unsubscribe(room, service, jid);
  }
  async userRooms(bare: string): Promise<string[]> {
    return [...new Set(await this.#gather('userRooms', [bare], () => this.local.userRooms(bare)))].sort();
  }
  async userSubscriptions(bare: string): Promise<Array<{ room: string; nick: string; nodes: string[] }>> {
    return uniqueBy(await this.#gather('userSubscriptions', [bare], () => this.local.userSubscriptions(bare)), (s) => s.room);
  }
  registerNick(service: string, bare: string, nick: string): Promise<void> {
    return this.local.registerNick(service, bare, nick);
  }
  unregisterNick(service: string, bare: string): Promise<void> {
    return this.local.unregisterNick(service, bare);
  }
  async inviteDirect(room: string, service: string, users: readonly Jid[], options: { password?: string; reason?: string }): Promise<void> {
    return (await this.#at(room, service)).inviteDirect(room, service, users, options);
  }
  async sendGroupchat(room: string, service: string, from: Jid, message: XmlElement): Promise<void> {
    return (await this.#at(room, service)).sendGroupchat(room, service, from, message);
  }
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}
