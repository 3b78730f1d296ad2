/**
 * mod_muc's part of XEP-0227 exports and imports: the persistent rooms of a host's MUC services, as host-level
 * data (XEP-0227 defines no format for rooms): one `<rooms xmlns='urn:service:piefxis:muc:0' service=…>` per
 * service, each `<room>` with its options (as stored, JSON), subject, affiliations, MUC/Sub subscribers,
 * stored history and vCard. On import a room that exists here is left as it is (and listed); a service that
 * is not one of this server's is refused before anything is written.
 */
import { Jid, PortabilityError, fromStoredXml, toStoredXml, x, type HostPortability, type XmlElement } from '@service/plugin-api';
import type { MucSettings } from './context.js';
import type { MucStore, StoredRoom } from './store.js';
import type { AffiliationEntry, SubscriberInfo } from './types.js';

export const NS_PIEFXIS_MUC = 'urn:service:piefxis:muc:0';
const AFFILIATIONS: readonly string[] = ['owner', 'admin', 'member', 'outcast'];
/** Every stored history message is exported, whatever history_size says now. */
const ALL_HISTORY = 1_000_000;

interface ImportedRoom extends StoredRoom {
  readonly vcard: string | undefined;
}

function roomElement(room: StoredRoom, vcard: string | undefined): XmlElement {
  return x(
    'room',
    { name: room.name, created: String(room.createdAt), 'last-activity': String(room.lastActivity) },
    x('options', {}, room.options),
    x('subject', { nick: room.subjectNick || undefined }, room.subject || undefined),
    ...room.affiliations.map((a) => x('affiliation', { jid: a.jid, affiliation: a.affiliation, reason: a.reason || undefined })),
    ...room.subscribers.map((s) => x('subscriber', { jid: s.jid, nick: s.nick }, ...s.nodes.map((n) => x('node', {}, n)))),
    ...room.history.map((h) => x('history', { stamp: String(h.timestamp) }, h.message)),
    vcard !== undefined ? x('vcard', {}, fromStoredXml(vcard)) : undefined,
  );
}

function time(value: string | undefined, what: string): number {
  const n = Number(value ?? '0');
  if (!Number.isSafeInteger(n) || n < 0) throw new PortabilityError(`muc: ${what} '${value}' is not a time in milliseconds`);
  return n;
}

function roomsOf(settings: MucSettings, host: string, elements: readonly XmlElement[]): ImportedRoom[] {
  const rooms: ImportedRoom[] = [];
  const seen = new Set<string>();
  for (const list of elements) {
    const service = (list.attr('service') ?? '').toLowerCase();
    if (!settings.services.includes(service) || settings.hostOf(service) !== host) {
      throw new PortabilityError(`muc: '${service}' is not a MUC service of ${host} here (this server's are ${settings.services.join(', ') || 'none'})`);
    }
    for (const room of list.elements()) {
      const name = room.attr('name');
      if (room.local !== 'room' || !name) throw new PortabilityError(`muc: <${room.local}/> in the rooms of ${service} is not a <room name=…>`);
      const jid = Jid.tryParse(`${name}@${service}`);
      if (!jid || jid.user !== name) throw new PortabilityError(`muc: '${name}' is not a valid room name`);
      if (seen.has(jid.bare)) throw new PortabilityError(`muc: the room ${jid.bare} appears twice`);
      seen.add(jid.bare);
      const options = room.getChildText('options') ?? '{}';
      try {
        if (typeof JSON.parse(options) !== 'object') throw new Error();
      } catch {
        throw new PortabilityError(`muc: the options of ${jid.bare} are not a JSON object`);
      }
      const affiliations = room.getChildren('affiliation').map((a) => {
        const affiliation = a.attr('affiliation') ?? '';
        const who = Jid.tryParse(a.attr('jid'));
        if (!AFFILIATIONS.includes(affiliation)) throw new PortabilityError(`muc: '${affiliation}' is not an affiliation (${AFFILIATIONS.join(', ')}) in ${jid.bare}`);
        if (!who) throw new PortabilityError(`muc: '${a.attr('jid')}' is not a valid JID in the affiliations of ${jid.bare}`);
        return { jid: who.bare, affiliation: affiliation as AffiliationEntry['affiliation'], reason: a.attr('reason') ?? '' };
      });
      const subscribers = room.getChildren('subscriber').map((s) => {
        const who = Jid.tryParse(s.attr('jid'));
        if (!who || !s.attr('nick')) throw new PortabilityError(`muc: a subscriber of ${jid.bare} has no valid jid or nick`);
        return { jid: who.bare, nick: s.attr('nick')!, nodes: s.getChildren('node').map((n) => n.text()) };
      });
      const history = room.getChildren('history').map((h) => {
        const message = h.elements()[0];
        if (!message) throw new PortabilityError(`muc: a history entry of ${jid.bare} has no message`);
        return { timestamp: time(h.attr('stamp'), 'a history stamp'), message };
      });
      const vcard = room.getChild('vcard')?.elements()[0];
      const subject = room.getChild('subject');
      rooms.push({
        service,
        name: jid.user!,
        options,
        subject: subject?.text() ?? '',
        subjectNick: subject?.attr('nick') ?? '',
        createdAt: time(room.attr('created'), 'created'),
        lastActivity: time(room.attr('last-activity'), 'last-activity'),
        affiliations,
        subscribers,
        history,
        vcard: vcard ? toStoredXml(vcard) : undefined,
      });
    }
  }
  return rooms;
}

export function mucPortability(store: MucStore, settings: MucSettings): HostPortability {
  return {
    kind: 'muc',
    claims: [{ name: 'rooms', ns: NS_PIEFXIS_MUC }],
    async exportHost(host) {
      const out: XmlElement[] = [];
      for (const service of settings.services.filter((s) => settings.hostOf(s) === host)) {
        const rows = (await store.rooms(service)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        if (!rows.length) continue;
        const rooms: XmlElement[] = [];
        for (const row of rows) {
          const room = await store.room(service, row.name, ALL_HISTORY);
          if (room) rooms.push(roomElement(room, await store.roomVcard(service, row.name)));
        }
        out.push(x('rooms', { xmlns: NS_PIEFXIS_MUC, service }, ...rooms));
      }
      return out;
    },
    checkHost(host, elements) {
      roomsOf(settings, host, elements);
    },
    async importHost(host, elements) {
      const skipped: Array<{ what: string; reason: string }> = [];
      let imported = 0;
      for (const room of roomsOf(settings, host, elements)) {
        if (await store.room(room.service, room.name, 0)) {
          skipped.push({ what: `room ${room.name}@${room.service}`, reason: 'the room exists here: left as it is' });
          continue;
        }
        await store.saveAll(room, room.affiliations, room.subscribers, room.history, room.vcard);
        imported++;
      }
      return { imported, skipped };
    },
  };
}
