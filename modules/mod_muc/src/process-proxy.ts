/**
 * Group chat under several workers (the `workers` option): a room's occupants meet in one process, so
 * every room lives in worker 1 (the home) and the other workers reach it through two channels of the
 * plugin API's ProcessesApi:
 *
 *   - `mod_muc.stanza`: a stanza a client of another worker sent to the conference service, handled in the
 *     home as if it had arrived there (what the home sends back to occupants is routed as usual, to
 *     sessions of any worker);
 *   - `mod_muc.api`: a MucApi call (mod_muc_admin's commands, send_message) made in another worker;
 *   - `mod_muc.event`: what the hooks of another worker saw that the rooms must know (a session of that
 *     worker ended: its occupants leave; an account was removed there: its nicks and subscriptions go).
 *
 * Each method is encoded explicitly (elements as trees, JIDs as text), and a MucError thrown in the home
 * comes back as the same MucError. With one process nothing here is used.
 */
import { ChannelError, Jid, StanzaError, elementOf, treeOf, type ChannelRegistration, type ChannelValue, type ElementTree, type ProcessesApi, type XmlElement } from '@service/plugin-api';
import { MucError, type MucApi, type MucErrorKind } from './types.js';

/** The worker that holds every room. */
export const HOME_WORKER = 1;

export const STANZA_CHANNEL = 'mod_muc.stanza';
export const API_CHANNEL = 'mod_muc.api';
export const EVENT_CHANNEL = 'mod_muc.event';

export type Payload = { readonly [key: string]: ChannelValue };

/** What the home does with what other workers hand it besides MucApi calls (MucRooms). */
export interface RoomsHome extends MucApi {
  handleStanza(stanza: XmlElement, from: Jid, to: Jid): Promise<void>;
  sessionClosed(full: Jid): Promise<void>;
  accountRemoved(bare: string): Promise<void>;
}

/**
 * How the home takes a stanza another process handed it: `hops` counts how often it was handed on
 * already (a cluster's node hands it on once more when the room moved meanwhile).
 */
export type StanzaIntake = (stanza: XmlElement, from: Jid, to: Jid, hops: number) => Promise<void>;

/** The home's side: runs what the other workers send. */
export function homeChannels(home: RoomsHome, intake: StanzaIntake = (stanza, from, to) => home.handleStanza(stanza, from, to)): ChannelRegistration[] {
  return [
    {
      name: STANZA_CHANNEL,
      handler: async (payload) => {
        const stanza = elementOf((payload as Payload).stanza as unknown as ElementTree);
        // The sending worker's router stamped and checked both addresses.
        await intake(stanza, Jid.parse(stanza.attr('from')!), Jid.parse(stanza.attr('to')!), Number((payload as Payload).hops ?? 0));
        return null;
      },
    },
    { name: API_CHANNEL, handler: (payload) => runCall(home, payload as Payload) },
    {
      name: EVENT_CHANNEL,
      handler: async (payload) => {
        const event = payload as Payload;
        if (event.event === 'session-closed') await home.sessionClosed(Jid.parse(event.jid as string));
        else if (event.event === 'account-removed') await home.accountRemoved(event.bare as string);
        return null;
      },
    },
  ];
}

/** Another worker's side of the rooms: stanzas and hook events go to the home, which answers senders itself. */
export class RoomsAway {
  constructor(
    private readonly processes: ProcessesApi,
    /** Answers a stanza the home could not be handed (it is restarting): the sender hears it. */
    private readonly bounce: (stanza: XmlElement, error: StanzaError) => Promise<void>,
  ) {}

  /**
   * Handed on without waiting for the home to finish with it, as a stanza to another worker's session is:
   * the link keeps a sender's stanzas in order, and the home answers the sender itself.
   */
  handleStanza(stanza: XmlElement): Promise<void> {
    this.#send(STANZA_CHANNEL, { stanza: treeOf(stanza) as unknown as ChannelValue }).catch(() =>
      this.bounce(stanza, new StanzaError('service-unavailable', 'the group chat service cannot be reached now')),
    );
    return Promise.resolve();
  }

  sessionClosed(full: Jid): Promise<void> {
    return this.#send(EVENT_CHANNEL, { event: 'session-closed', jid: full.full });
  }

  accountRemoved(bare: string): Promise<void> {
    return this.#send(EVENT_CHANNEL, { event: 'account-removed', bare });
  }

  async #send(channel: string, payload: Payload): Promise<void> {
    await this.processes.call(HOME_WORKER, channel, payload);
  }
}

export async function runCall(api: MucApi, call: Payload): Promise<ChannelValue> {
  const args = (call.args ?? []) as readonly ChannelValue[];
  const s = (i: number) => args[i] as string;
  switch (call.method as keyof MucApi) {
    case 'services':
      return api.services();
    case 'isService':
      return api.isService(s(0));
    case 'rooms':
      return (await api.rooms(args[0] === null ? undefined : s(0))) as unknown as ChannelValue;
    case 'room':
      return ((await api.room(s(0), s(1))) ?? null) as unknown as ChannelValue;
    case 'createRoom':
      await api.createRoom(s(0), s(1), (args[2] ?? undefined) as never);
      return null;
    case 'destroyRoom':
      await api.destroyRoom(s(0), s(1), (args[2] ?? undefined) as never);
      return null;
    case 'options':
      return (await api.options(s(0), s(1))) as unknown as ChannelValue;
    case 'setOption':
      await api.setOption(s(0), s(1), s(2), s(3));
      return null;
    case 'affiliation':
      return api.affiliation(s(0), s(1), s(2));
    case 'affiliations':
      return (await api.affiliations(s(0), s(1))) as unknown as ChannelValue;
    case 'setAffiliation':
      await api.setAffiliation(s(0), s(1), s(2), s(3) as never, args[4] === null ? undefined : s(4));
      return null;
    case 'occupants':
      return (await api.occupants(s(0), s(1))) as unknown as ChannelValue;
    case 'history':
      return (await api.history(s(0), s(1))).map((entry) => ({ timestamp: entry.timestamp, message: treeOf(entry.message) as unknown as ChannelValue }));
    case 'subscribers':
      return (await api.subscribers(s(0), s(1))) as unknown as ChannelValue;
    case 'subscribe':
      return api.subscribe(s(0), s(1), s(2), s(3), args[4] as string[]);
    case 'unsubscribe':
      await api.unsubscribe(s(0), s(1), s(2));
      return null;
    case 'userRooms':
      return api.userRooms(s(0));
    case 'userSubscriptions':
      return (await api.userSubscriptions(s(0))) as unknown as ChannelValue;
    case 'registerNick':
      await api.registerNick(s(0), s(1), s(2));
      return null;
    case 'unregisterNick':
      await api.unregisterNick(s(0), s(1));
      return null;
    case 'inviteDirect':
      await api.inviteDirect(s(0), s(1), (args[2] as string[]).map((jid) => Jid.parse(jid)), args[3] as never);
      return null;
    case 'sendGroupchat':
      await api.sendGroupchat(s(0), s(1), Jid.parse(s(2)), elementOf(args[3] as unknown as ElementTree));
      return null;
    default:
      throw new Error(`mod_muc.api has no method ${String(call.method)}`);
  }
}

/**
 * A MucApi whose calls run elsewhere: `send` carries each call ({method, args}) to the process or node
 * that holds the room, whose answer it resolves with. `services()` and `isService()` are answered here
 * from the configuration (they are synchronous, and every process has the same one). A MucError thrown
 * there comes back as the same MucError.
 */
export function remoteMucApi(send: (call: Payload) => Promise<ChannelValue>, local: Pick<MucApi, 'services' | 'isService'>): MucApi {
  const call = async (method: keyof MucApi, ...args: ChannelValue[]): Promise<ChannelValue> => {
    try {
      return await send({ method, args });
    } catch (err) {
      if (err instanceof ChannelError && err.errorName === 'MucError' && err.kind) throw new MucError(err.kind as MucErrorKind, err.message);
      throw err;
    }
  };
  const opt = (value: unknown): ChannelValue => (value === undefined ? null : (value as ChannelValue));
  return {
    services: () => local.services(),
    isService: (service) => local.isService(service),
    rooms: async (service) => (await call('rooms', opt(service))) as never,
    room: async (room, service) => ((await call('room', room, service)) ?? undefined) as never,
    createRoom: async (room, service, creation) => void (await call('createRoom', room, service, opt(creation))),
    destroyRoom: async (room, service, options) => void (await call('destroyRoom', room, service, opt(options))),
    options: async (room, service) => (await call('options', room, service)) as never,
    setOption: async (room, service, name, value) => void (await call('setOption', room, service, name, value)),
    affiliation: async (room, service, jid) => (await call('affiliation', room, service, jid)) as never,
    affiliations: async (room, service) => (await call('affiliations', room, service)) as never,
    setAffiliation: async (room, service, jid, affiliation, reason) => void (await call('setAffiliation', room, service, jid, affiliation, opt(reason))),
    occupants: async (room, service) => (await call('occupants', room, service)) as never,
    history: async (room, service) =>
      ((await call('history', room, service)) as Array<{ timestamp: number; message: ChannelValue }>).map((entry) => ({
        timestamp: entry.timestamp,
        message: elementOf(entry.message as unknown as ElementTree),
      })),
    subscribers: async (room, service) => (await call('subscribers', room, service)) as never,
    subscribe: async (room, service, jid, nick, nodes) => (await call('subscribe', room, service, jid, nick, [...nodes])) as string[],
    unsubscribe: async (room, service, jid) => void (await call('unsubscribe', room, service, jid)),
    userRooms: async (bare) => (await call('userRooms', bare)) as string[],
    userSubscriptions: async (bare) => (await call('userSubscriptions', bare)) as never,
    registerNick: async (service, bare, nick) => void (await call('registerNick', service, bare, nick)),
    unregisterNick: async (service, bare) => void (await call('unregisterNick', service, bare)),
    inviteDirect: async (room, service, users, options) => void (await call('inviteDirect', room, service, users.map((jid) => jid.full), opt(options))),
    sendGroupchat: async (room, service, from, message) => void (await call('sendGroupchat', room, service, from.full, treeOf(message) as unknown as ChannelValue)),
  };
}
