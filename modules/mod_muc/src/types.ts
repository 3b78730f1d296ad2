/**
 * The multi-user chat service as other modules see it (mod_muc_admin's commands, mod_admin_extra's
 * send_message of type groupchat): rooms by name and service, their options under ejabberd's names, their
 * affiliations, occupants, history and MUC/Sub subscribers. Every method acts on the room's live state (a
 * running room is changed in place, its occupants see the change as XEP-0045 says) and on its stored state
 * (a persistent room keeps the change across a restart).
 *
 * Errors are MucError with a kind the commands map onto their error table: `not_found` (no such room or
 * service), `bad_argument` (an unknown option, a bad value, a JID that is not one), `conflict` (the room
 * exists already, the nick is taken), `not_allowed` (the room's rules refuse it).
 */
import type { Jid, XmlElement } from '@service/plugin-api';

export type Affiliation = 'owner' | 'admin' | 'member' | 'outcast' | 'none';
export type Role = 'moderator' | 'participant' | 'visitor' | 'none';

/** ejabberd's MUC/Sub nodes (urn:xmpp:mucsub:nodes:<name>). */
export const MUCSUB_NODES = [
  'urn:xmpp:mucsub:nodes:presence',
  'urn:xmpp:mucsub:nodes:messages',
  'urn:xmpp:mucsub:nodes:affiliations',
  'urn:xmpp:mucsub:nodes:subject',
  'urn:xmpp:mucsub:nodes:config',
  'urn:xmpp:mucsub:nodes:participants',
  'urn:xmpp:mucsub:nodes:system',
] as const;

/**
 * A room's options, under ejabberd's names (mod_muc's default_room_options, change_room_option,
 * get_room_options). Values as the commands give and show them: booleans as true/false, lists of roles
 * (presence_broadcast) as role names.
 */
export interface RoomOptions {
  title: string;
  description: string;
  persistent: boolean;
  public: boolean;
  public_list: boolean;
  password_protected: boolean;
  password: string;
  members_only: boolean;
  moderated: boolean;
  members_by_default: boolean;
  allow_change_subj: boolean;
  /** ejabberd: allow_private_messages; who may send private messages within the room. */
  allow_private_messages: boolean;
  allow_query_users: boolean;
  allow_user_invites: boolean;
  allow_visitor_nickchange: boolean;
  allow_visitor_status: boolean;
  allow_voice_requests: boolean;
  /** Seconds between two voice requests of one occupant. */
  voice_request_min_interval: number;
  max_users: number;
  logging: boolean;
  mam: boolean;
  allow_subscription: boolean;
  lang: string;
  /** The roles whose presence is broadcast to the room. */
  presence_broadcast: Exclude<Role, 'none'>[];
  /** true: semi-anonymous (only moderators see real JIDs); false: non-anonymous (whois anyone). */
  anonymous: boolean;
  captcha_protected: boolean;
}

export type RoomOptionName = keyof RoomOptions;

/** One occupant as get_room_occupants shows it: the real full JID, the nick and the role. */
export interface OccupantInfo {
  jid: string;
  nick: string;
  role: Role;
  affiliation: Affiliation;
}

export interface AffiliationEntry {
  /** A bare JID (or a domain JID for a server-wide ban). */
  jid: string;
  affiliation: Exclude<Affiliation, 'none'>;
  reason: string;
}

export interface SubscriberInfo {
  /** The subscriber's bare JID. */
  jid: string;
  nick: string;
  nodes: string[];
}

export interface HistoryEntry {
  /** When the room received it, epoch ms. */
  timestamp: number;
  /** The message as occupants got it (from the room JID with the sender's nick), with its delay stamp. */
  message: XmlElement;
}

/** A room as listings show it. */
export interface RoomSummary {
  /** room@service */
  jid: string;
  room: string;
  service: string;
  /** The room's title (muc#roomconfig_roomname), '' when it has none. */
  title: string;
  public: boolean;
  persistent: boolean;
  occupants: number;
  /** History messages the room holds now (what rooms_empty_* counts as "not empty"). */
  historySize: number;
  /** The last message the room received, epoch ms; its creation when it has none. */
  lastActivity: number;
  createdAt: number;
}

/** Where a room is created from (create_room_with_opts, create_rooms_file). */
export interface RoomCreation {
  /** The virtual host the room belongs to (create_room's `host`): who may create and administer it. */
  host?: string;
  options?: Partial<RoomOptions>;
  affiliations?: ReadonlyArray<{ jid: string; affiliation: Affiliation }>;
  subscribers?: ReadonlyArray<{ jid: string; nick: string; nodes: string[] }>;
}

/** A message of a room archive: when the room got it, and the message as occupants got it (with its stanza-id). */
export interface RoomArchiveEntry {
  timestamp: number;
  message: XmlElement;
}

/** Who reads a room's archive, as the room let them (XEP-0313 §5 with XEP-0045's anonymity rules). */
export interface RoomArchiveReader {
  /** The requester's full JID: the results go there. */
  readonly jid: Jid;
  /** Whether the senders' real JIDs are shown: in a non-anonymous room, or to a moderator or an owner. */
  readonly seesRealJids: boolean;
}

/**
 * A room archive (XEP-0313 for rooms), which mod_mam provides and mod_muc uses when it runs: rooms with the
 * option `mam` archive their groupchat messages there, answer MAM queries from it, and read their history
 * from it. The room decides who may read (its occupants, members, affiliations); the archive stores,
 * pages and filters. Every method takes the room's bare JID.
 */
export interface MucArchiveApi {
  /**
   * Archives a groupchat message as the room broadcasts it (from room@service/nick), with the sender's real
   * bare JID (kept for those allowed to see it); resolves with its XEP-0359 stanza id, or undefined when it
   * was not archived (no body, a no-store hint, a storage failure, which is logged).
   */
  archive(room: Jid, message: XmlElement, sender: string | undefined, timestamp: number): Promise<string | undefined>;
  /** The last `limit` archived messages of the room, oldest first, without the senders' real JIDs. */
  history(room: Jid, limit: number): Promise<RoomArchiveEntry[]>;
  /** How many messages the room's archive holds, counted no further than `limit` (listings want a history size). */
  count(room: Jid, limit: number): Promise<number>;
  /** The query form of form discovery (XEP-0313 §5.1). */
  queryForm(): XmlElement;
  /** Answers a MAM query to the room: each result goes to the reader; resolves with the <fin/> of the IQ result. */
  query(room: Jid, query: XmlElement, reader: RoomArchiveReader): Promise<XmlElement>;
  /** Removes what the room archived up to `before` (ms): the room is gone. */
  removeRoom(room: Jid, before: number): Promise<void>;
}

export type MucErrorKind = 'not_found' | 'bad_argument' | 'conflict' | 'not_allowed';

export class MucError extends Error {
  constructor(
    readonly kind: MucErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'MucError';
  }
}

export interface MucApi {
  /** The conference services this server runs (conference.localhost…), in configuration order. */
  services(): string[];
  /** Whether `service` is one of them (case-insensitive, prepared). */
  isService(service: string): boolean;

  /** The rooms that exist (live, and persistent ones stored but not loaded), of one service or every service. */
  rooms(service?: string): Promise<RoomSummary[]>;
  /** One room, or undefined when it does not exist. */
  room(room: string, service: string): Promise<RoomSummary | undefined>;

  /** Creates a room with the service's default options and the given ones; conflict when it exists. */
  createRoom(room: string, service: string, creation?: RoomCreation): Promise<void>;
  /** Destroys a room: occupants get the destroy presence (with reason and alternate venue), stored state goes. */
  destroyRoom(room: string, service: string, options?: { reason?: string; alternate?: string }): Promise<void>;

  options(room: string, service: string): Promise<RoomOptions>;
  /** Changes one option from its text form (change_room_option); bad_argument names the option or value. */
  setOption(room: string, service: string, name: string, value: string): Promise<void>;

  affiliation(room: string, service: string, jid: string): Promise<Affiliation>;
  affiliations(room: string, service: string): Promise<AffiliationEntry[]>;
  /** Sets (or with 'none' removes) an affiliation, applying its role change to occupants as XEP-0045 §9/§10 do. */
  setAffiliation(room: string, service: string, jid: string, affiliation: Affiliation, reason?: string): Promise<void>;

  occupants(room: string, service: string): Promise<OccupantInfo[]>;
  history(room: string, service: string): Promise<HistoryEntry[]>;

  subscribers(room: string, service: string): Promise<SubscriberInfo[]>;
  /** Subscribes `jid` (bare) under `nick` to the given nodes; resolves with the nodes subscribed. */
  subscribe(room: string, service: string, jid: string, nick: string, nodes: readonly string[]): Promise<string[]>;
  unsubscribe(room: string, service: string, jid: string): Promise<void>;

  /** The rooms (room@service) where the account (bare JID) has an occupant. */
  userRooms(bare: string): Promise<string[]>;
  /** The account's MUC/Sub subscriptions. */
  userSubscriptions(bare: string): Promise<Array<{ room: string; nick: string; nodes: string[] }>>;

  /** Registers a nick for an account on a service (XEP-0045 §7.10); conflict when another account holds it. */
  registerNick(service: string, bare: string, nick: string): Promise<void>;
  /** Removes the account's registered nick; not_found when it has none. */
  unregisterNick(service: string, bare: string): Promise<void>;

  /** Sends XEP-0249 direct invitations to a room from the room itself. */
  inviteDirect(room: string, service: string, users: readonly Jid[], options: { password?: string; reason?: string }): Promise<void>;
  /**
   * A groupchat message into the room on behalf of `from` (send_message): an occupant's full JID, a
   * subscriber's bare JID or a service admin's bare JID; not_allowed for anyone else.
   */
  sendGroupchat(room: string, service: string, from: Jid, message: XmlElement): Promise<void>;
}
