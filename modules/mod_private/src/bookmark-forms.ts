/**
 * The two forms of a room bookmark: XEP-0048's <conference jid name autojoin><nick/><password/></conference>
 * inside one <storage xmlns='storage:bookmarks'/>, and XEP-0402's item named by the room's JID holding
 * <conference xmlns='urn:xmpp:bookmarks:1' name autojoin><nick/><password/></conference>. Converting one
 * into the other keeps the room, its name, autojoin, nick and password.
 */
import { Jid, x, type XmlElement } from '@service/plugin-api';

export const NS_BOOKMARKS_LEGACY = 'storage:bookmarks';
export const NS_BOOKMARKS_PEP = 'urn:xmpp:bookmarks:1';

/** A XEP-0402 bookmark: the item id (the room's bare JID) and its payload. */
export interface PepBookmark {
  readonly room: string;
  readonly payload: XmlElement;
}

/** The XEP-0402 form of one XEP-0048 <conference/>, or undefined when it names no valid room. */
export function pepBookmark(conference: XmlElement): PepBookmark | undefined {
  const room = Jid.tryParse(conference.attr('jid') ?? '');
  if (!room || room.user === undefined || room.resource !== undefined) return undefined;
  const autojoin = conference.attr('autojoin');
  const payload = x('conference', {
    xmlns: NS_BOOKMARKS_PEP,
    ...(conference.attr('name') !== undefined ? { name: conference.attr('name')! } : {}),
    autojoin: autojoin === 'true' || autojoin === '1' ? 'true' : 'false',
  });
  const nick = conference.getChildText('nick');
  if (nick) payload.append(x('nick', {}, nick));
  const password = conference.getChildText('password');
  if (password) payload.append(x('password', {}, password));
  return { room: room.bare, payload };
}

/** The XEP-0048 <conference/> of one XEP-0402 item. */
export function legacyConference(room: string, payload: XmlElement | undefined): XmlElement {
  const conference = x('conference', {
    jid: room,
    ...(payload?.attr('name') !== undefined ? { name: payload.attr('name')! } : {}),
    autojoin: payload?.attr('autojoin') === 'true' || payload?.attr('autojoin') === '1' ? 'true' : 'false',
  });
  const nick = payload?.getChildText('nick');
  if (nick) conference.append(x('nick', {}, nick));
  const password = payload?.getChildText('password');
  if (password) conference.append(x('password', {}, password));
  return conference;
}
