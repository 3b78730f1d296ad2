/**
 * MucApi over the live rooms (mod_muc_admin's commands, mod_admin_extra's send_message): each call checks
 * its arguments (room names and JIDs prepared as XMPP prepares them), runs under the room's lock, changes
 * the live room as the equivalent stanza would (occupants are told) and its stored state. Errors are
 * MucError: not_found, bad_argument (naming the option or value), conflict, not_allowed.
 */
import { Jid, StanzaError, type XmlElement } from '@service/plugin-api';
import { applyOptions, destroyRoom, persistAll, setAffiliation } from './actions.js';
import { broadcastGroupchat, shownAffiliation } from './broadcast.js';
import { sendDirectInvitations } from './invitations.js';
import { isAffiliation } from './occupants.js';
import { prepareNick } from './nick-registration.js';
import { summaryOf, type RoomRegistry } from './registry.js';
import type { Room } from './room.js';
import { RoomOptionError, assignOption, isRoomOptionName, parseOptionText, withOptions } from './room-options.js';
import { NickTaken } from './store.js';
import { addSubscriber, removeSubscriber } from './subscriptions.js';
import { MUCSUB_NODES, MucError, type Affiliation, type AffiliationEntry, type HistoryEntry, type MucApi, type OccupantInfo, type RoomCreation, type RoomOptions, type RoomSummary, type SubscriberInfo } from './types.js';

/** Whether `service` (as given: prepared here) is one of the conference services; a worker without the rooms asks this too. */
export function isConferenceService(services: readonly string[], service: string): boolean {
  const prepared = Jid.tryParse(service);
  return prepared !== undefined && prepared.user === undefined && prepared.resource === undefined && services.includes(prepared.host);
}

export class MucService implements MucApi {
  constructor(private readonly registry: RoomRegistry) {}

  services(): string[] {
    return [...this.registry.env.settings.services];
  }

  isService(service: string): boolean {
    return isConferenceService(this.registry.env.settings.services, service);
  }

  async rooms(service?: string): Promise<RoomSummary[]> {
    const svc = service === undefined ? undefined : this.#service(service);
    return this.registry.summaries(svc);
  }

  async room(room: string, service: string): Promise<RoomSummary | undefined> {
    const [name, svc] = this.#names(room, service);
    return this.registry.withRoom(name, svc, async () => {
      const live = await this.registry.get(name, svc);
      return live ? summaryOf(live) : undefined;
    });
  }

  async createRoom(room: string, service: string, creation: RoomCreation = {}): Promise<void> {
    const [name, svc] = this.#names(room, service);
    const env = this.registry.env;
    let options: RoomOptions;
    try {
      options = withOptions(env.settings.defaultRoomOptions, creation.options ?? {});
    } catch (err) {
      throw badArgument(err);
    }
    if (options.captcha_protected) throw new MucError('bad_argument', 'captcha_protected: this server has no CAPTCHA');
    const affiliations = (creation.affiliations ?? []).map((a) => ({ jid: this.#bare(a.jid), affiliation: this.#affiliation(a.affiliation) }));
    const subscribers = (creation.subscribers ?? []).map((s) => ({ jid: this.#bare(s.jid), nick: this.#nick(s.nick), nodes: this.#nodes(s.nodes) }));
    await this.registry.withRoom(name, svc, async () => {
      if (await this.registry.get(name, svc)) throw new MucError('conflict', `the room ${name}@${svc} exists already`);
      const created = this.registry.create(name, svc, options);
      for (const a of affiliations) if (a.affiliation !== 'none') created.affiliations.set(a.jid, { affiliation: a.affiliation, reason: '' });
      for (const s of subscribers) created.subscribers.set(s.jid, s);
      if (options.persistent) await persistAll(env, created);
    });
  }

  async destroyRoom(room: string, service: string, options: { reason?: string; alternate?: string } = {}): Promise<void> {
    const alternate = options.alternate ? Jid.tryParse(options.alternate) : undefined;
    if (options.alternate && !alternate) throw new MucError('bad_argument', `alternate: '${options.alternate}' is not a JID`);
    await this.#withRoom(room, service, async (live) => {
      await destroyRoom(this.registry.env, live, options.reason, alternate?.full);
      this.registry.drop(live);
    });
  }

  async options(room: string, service: string): Promise<RoomOptions> {
    return this.#withRoom(room, service, async (live) => ({ ...live.options, presence_broadcast: [...live.options.presence_broadcast] }));
  }

  async setOption(room: string, service: string, name: string, value: string): Promise<void> {
    if (!isRoomOptionName(name)) throw new MucError('bad_argument', `unknown room option '${name}'`);
    let parsed: RoomOptions[typeof name];
    try {
      parsed = parseOptionText(name, value);
    } catch (err) {
      throw badArgument(err);
    }
    await this.#withRoom(room, service, async (live) => {
      const options: RoomOptions = { ...live.options, presence_broadcast: [...live.options.presence_broadcast] };
      assignOption(options, name, parsed);
      if (options.captcha_protected) throw new MucError('bad_argument', `room option 'captcha_protected': this server has no CAPTCHA`);
      live.locked = false;
      const { destroyed } = await applyOptions(this.registry.env, live, options);
      if (destroyed) this.registry.drop(live);
    });
  }

  async affiliation(room: string, service: string, jid: string): Promise<Affiliation> {
    const bare = this.#bare(jid);
    return this.#withRoom(room, service, async (live) => live.affiliationOf(bare));
  }

  async affiliations(room: string, service: string): Promise<AffiliationEntry[]> {
    return this.#withRoom(room, service, async (live) => live.affiliationList());
  }

  async setAffiliation(room: string, service: string, jid: string, affiliation: Affiliation, reason = ''): Promise<void> {
    const bare = this.#bare(jid);
    const checked = this.#affiliation(affiliation);
    await this.#withRoom(room, service, async (live) => {
      await setAffiliation(this.registry.env, live, bare, checked, undefined, reason);
    });
  }

  async occupants(room: string, service: string): Promise<OccupantInfo[]> {
    return this.#withRoom(room, service, async (live) =>
      [...live.occupants.values()].flatMap((o) => [...o.sessions.values()].map((s) => ({ jid: s.jid.full, nick: o.nick, role: o.role, affiliation: shownAffiliation(this.registry.env, live, o.bare) }))),
    );
  }

  async history(room: string, service: string): Promise<HistoryEntry[]> {
    return this.#withRoom(room, service, async (live) => live.history.entries());
  }

  async subscribers(room: string, service: string): Promise<SubscriberInfo[]> {
    return this.#withRoom(room, service, async (live) => [...live.subscribers.values()].map((s) => ({ ...s, nodes: [...s.nodes] })));
  }

  async subscribe(room: string, service: string, jid: string, nick: string, nodes: readonly string[]): Promise<string[]> {
    const subscriber = { jid: this.#bare(jid), nick: this.#nick(nick), nodes: this.#nodes(nodes) };
    await this.#withRoom(room, service, async (live) => {
      try {
        await addSubscriber(this.registry.env, live, subscriber, { trusted: true });
      } catch (err) {
        if (err instanceof StanzaError && err.condition === 'conflict') throw new MucError('conflict', err.text ?? 'the nick is taken');
        throw err;
      }
    });
    return subscriber.nodes;
  }

  async unsubscribe(room: string, service: string, jid: string): Promise<void> {
    const bare = this.#bare(jid);
    await this.#withRoom(room, service, async (live) => {
      if (!(await removeSubscriber(this.registry.env, live, bare))) throw new MucError('not_found', `${bare} is not subscribed to ${live.jid.bare}`);
      this.registry.dropIfDone(live);
    });
  }

  async userRooms(bare: string): Promise<string[]> {
    const account = this.#bare(bare);
    return this.registry.live().filter((r) => r.occupantsOf(account).length > 0).map((r) => r.jid.bare);
  }

  async userSubscriptions(bare: string): Promise<Array<{ room: string; nick: string; nodes: string[] }>> {
    const account = this.#bare(bare);
    const stored = (await this.registry.env.store.subscriptionsOf(account)).map((s) => ({ room: `${s.room}@${s.service}`, nick: s.nick, nodes: s.nodes }));
    const live = this.registry
      .live()
      .filter((r) => !r.options.persistent && r.subscribers.has(account))
      .map((r) => ({ room: r.jid.bare, nick: r.subscribers.get(account)!.nick, nodes: [...r.subscribers.get(account)!.nodes] }));
    return [...stored, ...live];
  }

  async registerNick(service: string, bare: string, nick: string): Promise<void> {
    const svc = this.#service(service);
    try {
      await this.registry.env.store.registerNick(svc, this.#bare(bare), this.#nick(nick));
    } catch (err) {
      if (err instanceof NickTaken) throw new MucError('conflict', `the nick '${nick}' is registered by another account on ${svc}`);
      throw err;
    }
  }

  async unregisterNick(service: string, bare: string): Promise<void> {
    const svc = this.#service(service);
    if (!(await this.registry.env.store.unregisterNick(svc, this.#bare(bare)))) throw new MucError('not_found', `${bare} has no registered nick on ${svc}`);
  }

  async inviteDirect(room: string, service: string, users: readonly Jid[], options: { password?: string; reason?: string }): Promise<void> {
    await this.#withRoom(room, service, (live) => sendDirectInvitations(this.registry.env, live, users, options));
  }

  async sendGroupchat(room: string, service: string, from: Jid, message: XmlElement): Promise<void> {
    const env = this.registry.env;
    await this.#withRoom(room, service, async (live) => {
      const occupant = from.isBare ? undefined : live.occupantBySession(from.full);
      if (occupant) {
        if (occupant.role === 'visitor' && live.options.moderated) throw new MucError('not_allowed', `${from.full} is a visitor in the moderated room ${live.jid.bare}`);
        return broadcastGroupchat(env, live, occupant.nick, message, { keep: true, sender: occupant.bare });
      }
      if (from.isBare && env.isServiceAdmin(from.bare, live.host)) return broadcastGroupchat(env, live, undefined, message, { keep: true, sender: from.bare });
      const subscriber = from.isBare ? live.subscribers.get(from.bare) : undefined;
      if (subscriber) return broadcastGroupchat(env, live, subscriber.nick, message, { keep: true, sender: from.bare });
      throw new MucError('not_allowed', `${from.full} is neither an occupant, a subscriber nor a service administrator of ${live.jid.bare}`);
    });
  }

  /** Runs `task` on an existing room under its lock; not_found when there is none. */
  async #withRoom<T>(room: string, service: string, task: (live: Room) => Promise<T>): Promise<T> {
    const [name, svc] = this.#names(room, service);
    return this.registry.withRoom(name, svc, async () => {
      const live = await this.registry.get(name, svc);
      if (!live) throw new MucError('not_found', `there is no room ${name}@${svc}`);
      return task(live);
    });
  }

  #service(service: string): string {
    const jid = Jid.tryParse(service);
    if (!jid || jid.user !== undefined || jid.resource !== undefined || !this.registry.isService(jid.host)) throw new MucError('not_found', `'${service}' is not a conference service of this server`);
    return jid.host;
  }

  #names(room: string, service: string): [string, string] {
    const svc = this.#service(service);
    const jid = room === '' ? undefined : Jid.tryParse(`${room}@${svc}`);
    if (!jid || jid.user === undefined || jid.resource !== undefined || jid.host !== svc) throw new MucError('bad_argument', `'${room}' is not a valid room name`);
    return [jid.user, svc];
  }

  #bare(text: string): string {
    const jid = Jid.tryParse(text);
    if (!jid) throw new MucError('bad_argument', `'${text}' is not a valid JID`);
    return jid.bare;
  }

  #nick(text: string): string {
    const nick = text === '' ? undefined : prepareNick(text);
    if (nick === undefined) throw new MucError('bad_argument', `'${text}' is not a valid nick`);
    return nick;
  }

  #affiliation(text: string): Affiliation {
    if (!isAffiliation(text)) throw new MucError('bad_argument', `'${text}' is not an affiliation (owner, admin, member, outcast, none)`);
    return text;
  }

  #nodes(nodes: readonly string[]): string[] {
    const out: string[] = [];
    for (const node of nodes) {
      if (!(MUCSUB_NODES as readonly string[]).includes(node)) throw new MucError('bad_argument', `'${node}' is not a MUC/Sub node (${MUCSUB_NODES.join(', ')})`);
      if (!out.includes(node)) out.push(node);
    }
    return out;
  }
}

function badArgument(err: unknown): MucError {
  if (err instanceof RoomOptionError) return new MucError('bad_argument', err.message);
  if (err instanceof MucError) return err;
  throw err;
}
