/**
 * Room archives (XEP-0313 §5), the mucArchiveService mod_muc uses for rooms with the option `mam`. A room's
 * groupchat messages are stored in the archive table as an account's are, under owner = the conference
 * service and the room's name, kind 'groupchat', with peer = the room JID and peer_full = the occupant JID
 * (room@service/nick) that sent it: a `with` of the room's JID matches every message, one of an occupant
 * JID that nick's. The message is stored as the room broadcast it, plus the sender's real bare JID in a
 * muc#user <item jid/> (what XEP-0313 §5.1.2 shows to those allowed, as ejabberd stores it); a reader the
 * room does not allow to see real JIDs gets the message without it, and history never carries it. Who may
 * query is the room's decision (mod_muc's archive.ts); paging and filters are query.ts's.
 */
import { StanzaError, accountKey, x, type AccountKey, type Jid, type Logger, type RouterApi, type XmlElement } from '@service/plugin-api';
import type { MucArchiveApi, RoomArchiveEntry, RoomArchiveReader } from '@service/mod_muc/api';
import { queryForm } from './form.js';
import type { RoomArchiveStore } from './muc-store.js';
import { NS_SID } from './ns.js';
import { archivableGroupchatBody } from './policy.js';
import { answerArchiveQuery, type QueryDeps } from './query.js';
import type { ArchiveStore } from './store.js';

const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';

export interface RoomArchiveDeps {
  readonly store: ArchiveStore;
  readonly rooms: RoomArchiveStore;
  readonly router: RouterApi;
  readonly logger: Logger;
  readonly maxPage: () => number;
}

/** The message without muc#user elements: the sender may not speak for the room about who it is. */
function withoutMucUser(message: XmlElement): XmlElement {
  return message.getChild('x', NS_MUC_USER) ? message.clone().removeChildren((c) => c.is('x', NS_MUC_USER)) : message;
}

export class RoomArchive implements MucArchiveApi {
  readonly #query: QueryDeps;

  constructor(private readonly deps: RoomArchiveDeps) {
    this.#query = { store: deps.store, router: deps.router, maxPage: deps.maxPage };
  }

  async archive(room: Jid, message: XmlElement, sender: string | undefined, timestamp: number): Promise<string | undefined> {
    const body = archivableGroupchatBody(message);
    if (body === undefined) return undefined;
    // As broadcast (mod_muc took out stanza-ids naming the room), without muc#user items a client might
    // have put in to pass for someone: the real JID is the room's word.
    const stored = withoutMucUser(message).clone();
    if (sender !== undefined) stored.append(x('x', { xmlns: NS_MUC_USER }, x('item', { jid: sender })));
    try {
      return await this.deps.store.add(this.#owner(room), { peer: room.bare, peerFull: message.attr('from') ?? room.bare, direction: 'in', stanza: stored, body, createdAt: timestamp }, 'groupchat');
    } catch (err) {
      // As for one-to-one messages: the room's message goes on unarchived, and the log says so.
      this.deps.logger.error({ err, room: room.bare }, 'a room message could not be archived');
      return undefined;
    }
  }

  async history(room: Jid, limit: number): Promise<RoomArchiveEntry[]> {
    const latest = await this.deps.rooms.latest(this.#owner(room), limit);
    return latest.map((m) => ({ timestamp: m.createdAt, message: withoutMucUser(m.stanza).clone().append(x('stanza-id', { xmlns: NS_SID, by: room.bare, id: m.stanzaId })) }));
  }

  count(room: Jid, limit: number): Promise<number> {
    return this.deps.rooms.countUpTo(this.#owner(room), limit);
  }

  queryForm(): XmlElement {
    return queryForm();
  }

  query(room: Jid, query: XmlElement, reader: RoomArchiveReader): Promise<XmlElement> {
    return answerArchiveQuery(query, this.#query, {
      owner: this.#owner(room),
      archiveJid: room.bare,
      requester: reader.jid.full,
      deliver: (result) => this.deps.router.route(result),
      ...(reader.seesRealJids ? {} : { shown: withoutMucUser }),
    });
  }

  async removeRoom(room: Jid, before: number): Promise<void> {
    await this.deps.rooms.removeRoom(this.#owner(room), before);
  }

  #owner(room: Jid): AccountKey {
    if (room.user === undefined) throw new StanzaError('bad-request', `'${room.bare}' is not a room`);
    return accountKey(room.user, room.host);
  }
}
