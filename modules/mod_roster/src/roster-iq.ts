/**
 * jabber:iq:roster (RFC 6121 §2): the roster get (with XEP-0237 versions) and the roster set that adds,
 * updates or removes one item. Only the owner may read or change a roster.
 */
import type { IqHandler } from '@service/plugin-api';
import { markInterested } from './pushes.js';
import { removeItem } from './removal.js';
import { StanzaError } from '@service/plugin-api';
import type { Roster } from './roster.js';
import { mergedRoster, visibleVersion } from './shared.js';
import { itemElement, rosterQuery } from './roster-xml.js';
import { NO_SUBSCRIPTION } from './state.js';
import { RosterError } from './types.js';
import { parseRosterSet } from './validation.js';

/** Runs `work`, answering a RosterError with the stanza error it names. */
async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof RosterError) throw new StanzaError(err.condition, err.message);
    throw err;
  }
}

export function rosterGet(roster: Roster): IqHandler {
  return async ({ payload, from, self, session }) => {
    if (!self) throw new StanzaError('forbidden', 'only its owner may read a roster');
    const owner = from.toBare();
    // A client that sends 'ver' (even empty) speaks XEP-0237.
    const clientVersion = payload.attr('ver');
    const versioned = roster.versioning && clientVersion !== undefined;
    if (session) markInterested(session, versioned);
    const shared = await roster.shared.of(owner);
    const items = async () => mergedRoster(await roster.store.items(owner), shared).map(itemElement);
    if (!versioned) return rosterQuery(await items(), undefined);
    const version = visibleVersion(await roster.store.version(owner), shared);
    // Up to date: an empty result; changes from now on arrive as pushes.
    if (clientVersion === version) return undefined;
    return rosterQuery(await items(), version);
  };
}

export function rosterSet(roster: Roster): IqHandler {
  return ({ payload, from, self }) =>
    answering(async () => {
      if (!self) throw new RosterError('forbidden', 'only its owner may change a roster');
      const owner = from.toBare();
      const request = parseRosterSet(owner, payload);
      if (request.kind === 'remove') {
        // A contact a shared roster group puts in the roster stays as long as the group shows it.
        const shared = await roster.shared.one(owner, request.contact.bare);
        if (shared && !(await roster.store.item(owner, request.contact.bare))?.inRoster) {
          throw new RosterError('not-allowed', `${request.contact.bare} is in the roster through a shared roster group (${shared.groups.join(', ')})`);
        }
        await removeItem(roster, owner, request.contact, { cancelSubscriptions: true, requireInRoster: true, cause: 'roster_remove', direction: 'outbound' });
        return;
      }
      await roster.change(owner, request.contact.bare, async (current, trx) => {
        await roster.ensureRoom(trx, owner, current);
        // The subscription state is the server's: a roster set changes only the name and the groups.
        const next = { contact: request.contact.bare, nick: request.nick, groups: request.groups, flags: current?.flags ?? NO_SUBSCRIPTION, inRoster: true, request: current?.request };
        return { next, result: undefined };
      });
    });
}
