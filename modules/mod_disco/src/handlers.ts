/**
 * The disco#info and disco#items IQ handlers, for the server's domain and for accounts' bare JIDs.
 *
 * A query to a bare JID is answered by the server on the account's behalf (XEP-0030 §3.1, RFC 6121
 * §8.5.1), under XEP-0030 §8's rules, so that nobody learns whether an account exists without being
 * entitled to its presence: only the account itself and contacts it granted a presence subscription to
 * ('from' or 'both') get the account's answer. Anyone else, and anyone asking about an account that does
 * not exist, gets <service-unavailable/> for disco#info and an empty disco#items result — the same
 * answers in both cases, so that they cannot be told apart. Those who may discover the account get what
 * modules answer about it (PEP nodes and their items, AccountDisco); a node nobody answers for is
 * item-not-found.
 */
import type { PresenceAccess } from '@service/mod_roster/api';
import type { IqContext, IqHandlerRegistration, ServerServices, XmlElement, XmppApi } from '@service/plugin-api';
import { infoQuery } from './info.js';
import { itemsQuery, type AccountDisco, type ServerItems } from './items.js';
import { NS_DISCO_INFO, NS_DISCO_ITEMS } from './ns.js';
import { StanzaError } from '@service/plugin-api';

type AccountService = ServerServices['accounts'];

export function discoHandlers(xmpp: XmppApi, accounts: AccountService, access: PresenceAccess, serverItems: ServerItems, accountDisco: AccountDisco): IqHandlerRegistration[] {
  const serverInfo = (ctx: IqContext) => {
    refuseNodes(ctx.payload);
    return infoQuery(xmpp.disco.identities('server', ctx.to.host), xmpp.disco.features('server', ctx.to.host));
  };
  const serverItemsOf = (ctx: IqContext) => {
    refuseNodes(ctx.payload);
    return itemsQuery(serverItems.of(ctx.to.host));
  };
  /** §8: whether the requester may learn about the account (which then exists). */
  const mayDiscover = async (ctx: IqContext) => ctx.self || ((await access(ctx.to, ctx.from)) && (await accounts.exists(ctx.to.user!, ctx.to.host)));
  const accountInfo = async (ctx: IqContext) => {
    // §8 rule 1: the same answer as for an account that does not exist.
    if (!(await mayDiscover(ctx))) throw new StanzaError('service-unavailable');
    const node = ctx.payload.attr('node');
    if (node !== undefined) return (await accountDisco.nodeInfo(ctx.to, ctx.from, node)) ?? noSuchNode(ctx.payload);
    return infoQuery(xmpp.disco.identities('account', ctx.to.host), xmpp.disco.features('account', ctx.to.host));
  };
  const accountItems = async (ctx: IqContext) => {
    // §8 rule 2: an empty result, node or not, since an error would tell the cases apart.
    if (!(await mayDiscover(ctx))) return itemsQuery([]);
    const node = ctx.payload.attr('node');
    const items = await accountDisco.items(ctx.to, ctx.from, node);
    return items === undefined ? noSuchNode(ctx.payload) : itemsQuery(items, node);
  };
  return [
    { type: 'get', ns: NS_DISCO_INFO, to: 'server', handler: serverInfo },
    { type: 'get', ns: NS_DISCO_ITEMS, to: 'server', handler: serverItemsOf },
    { type: 'get', ns: NS_DISCO_INFO, to: 'account', handler: accountInfo },
    { type: 'get', ns: NS_DISCO_ITEMS, to: 'account', handler: accountItems },
  ];
}

/** The server's domain publishes no nodes: a node query names something that does not exist. */
function refuseNodes(query: XmlElement): void {
  if (query.attr('node') !== undefined) noSuchNode(query);
}

/** A node query that nobody answers. */
function noSuchNode(query: XmlElement): never {
  throw new StanzaError('item-not-found', `there is no node '${query.attr('node') ?? ''}' here`);
}
