/**
 * Answering a MAM query (XEP-0313 §4): the page of an archive, each message sent to the requesting
 * resource inside <result/><forwarded/> with its archive time, then the IQ result with <fin/> and the
 * XEP-0059 summary. Ids given by the client (RSM after/before, before-id/after-id) that the archive does
 * not hold are item-not-found, as §4.1.3 asks. An account's own archive is queried at its JID; a room's
 * (§5) at the room's, through muc-archive.ts, which says how the room shows its messages to the reader.
 */
import { randomUUID } from 'node:crypto';
import { NS, StanzaError, accountKey, x, type AccountKey, type IqContext, type RouterApi, type XmlElement } from '@service/plugin-api';
import { parseQuery } from './form.js';
import { NS_DELAY, NS_FORWARD, NS_MAM, NS_RSM } from './ns.js';
import type { ArchiveFilter, ArchiveStore, ArchivedMessage, Cursor } from './store.js';

export interface QueryDeps {
  readonly store: ArchiveStore;
  readonly router: RouterApi;
  readonly maxPage: () => number;
}

/** Whose archive a query reads, who gets the results, and how each archived message is shown to them. */
export interface QueryTarget {
  readonly owner: AccountKey;
  /** The archive's JID: the results come from it. */
  readonly archiveJid: string;
  /** The requester's full JID. */
  readonly requester: string;
  /** Sends one result message to the requester. */
  readonly deliver: (result: XmlElement) => Promise<void>;
  /** The archived message as this requester may see it (a room hides real JIDs from some); as stored by default. */
  readonly shown?: (stanza: XmlElement) => XmlElement;
}

export async function answerQuery(ctx: IqContext, deps: QueryDeps): Promise<XmlElement> {
  // Only the account itself reads its archive.
  if (!ctx.self) throw new StanzaError('forbidden', 'only the account itself may query its archive');
  const session = ctx.session;
  return answerArchiveQuery(ctx.payload, deps, {
    owner: accountKey(ctx.to.user!, ctx.to.host),
    archiveJid: ctx.to.bare,
    requester: ctx.from.full,
    deliver: (result) => (session ? deps.router.deliverToSession(session, result) : deps.router.route(result)),
  });
}

/** Answers the query `payload` from `target`'s archive: the results are delivered, the <fin/> returned. */
export async function answerArchiveQuery(payload: XmlElement, deps: QueryDeps, target: QueryTarget): Promise<XmlElement> {
  const request = parseQuery(payload);
  const owner = target.owner;
  const cursor = async (id: string, what: string): Promise<Cursor> => {
    const found = await deps.store.cursorOf(owner, id);
    if (!found) throw new StanzaError('item-not-found', `${what}: '${id}' is not in the archive`);
    return found;
  };
  const filter: ArchiveFilter = {
    ...(request.with ? { with: { bare: request.with.bare, ...(request.with.isBare ? {} : { full: request.with.full }) } } : {}),
    ...(request.start !== undefined ? { start: request.start } : {}),
    ...(request.end !== undefined ? { end: request.end } : {}),
    ...(request.ids ? { ids: request.ids } : {}),
    ...(request.afterId !== undefined ? { after: await cursor(request.afterId, 'after-id') } : {}),
    ...(request.beforeId !== undefined ? { before: await cursor(request.beforeId, 'before-id') } : {}),
  };
  const limit = Math.min(request.max ?? deps.maxPage(), deps.maxPage());
  const backwards = request.before !== undefined;
  const from = request.after !== undefined ? await cursor(request.after, 'after') : request.before ? await cursor(request.before, 'before') : undefined;
  const page = await deps.store.page(owner, filter, { limit, backwards, ...(from ? { from } : {}) });

  const messages = request.flip ? [...page.messages].reverse() : page.messages;
  for (const message of messages) {
    const shown = message.stanza && target.shown ? { ...message, stanza: target.shown(message.stanza) } : message;
    await target.deliver(resultMessage(target.archiveJid, target.requester, request.queryId, shown));
  }
  const set = x('set', { xmlns: NS_RSM });
  if (page.messages.length) {
    set.append(x('first', { index: page.index }, page.messages[0]!.stanzaId), x('last', {}, page.messages[page.messages.length - 1]!.stanzaId));
  }
  // Left out past what the store counts cheaply (XEP-0059 makes it optional; store.ts COUNT_LIMIT).
  if (page.count !== undefined) set.append(x('count', {}, String(page.count)));
  return x('fin', { xmlns: NS_MAM, complete: page.complete ? 'true' : 'false' }, set);
}

function resultMessage(owner: string, to: string, queryId: string | undefined, message: ArchivedMessage): XmlElement {
  // Inside <forwarded/> the message needs its own namespace declaration, or it would inherit forward:0.
  const original = message.stanza ? message.stanza.clone().setAttr('xmlns', NS.CLIENT) : undefined;
  return x(
    'message',
    { from: owner, to, id: randomUUID() },
    x(
      'result',
      { xmlns: NS_MAM, queryid: queryId, id: message.stanzaId },
      x('forwarded', { xmlns: NS_FORWARD }, x('delay', { xmlns: NS_DELAY, stamp: new Date(message.createdAt).toISOString() }), original),
    ),
  );
}
