/**
 * The disco#info and disco#items IQ handlers, for the server's domain and for accounts' bare JIDs.
 *
 * A query to a bare JID is answered by the server on the account's behalf (XEP-0030 §3.1, RFC 6121
 * §8.5.1): <service-unavailable/> when there is no such account, like any stanza to one. It is answered
 * for anyone, subscribed or not: what it reveals (the account exists and what this server supports for
 * accounts) is already revealed by other means — a message to a missing account bounces, and the
 * server's own disco#info lists the same features.
 */
import type { IqContext, IqHandlerRegistration, KernelServices, XmlElement, XmppService } from '@service/kernel';
import { infoQuery } from './info.js';
import { itemsQuery, type ServerItems } from './items.js';
import { NS_DISCO_INFO, NS_DISCO_ITEMS } from './ns.js';
import { StanzaError } from '@service/kernel';

type AccountService = KernelServices['accounts'];

export function discoHandlers(xmpp: XmppService, accounts: AccountService, serverItems: ServerItems): IqHandlerRegistration[] {
  const serverInfo = (ctx: IqContext) => {
    refuseNodes(ctx.payload);
    return infoQuery(xmpp.disco.identities('server'), xmpp.disco.features('server'));
  };
  const serverItemsOf = (ctx: IqContext) => {
    refuseNodes(ctx.payload);
    return itemsQuery(serverItems.of(ctx.to.host));
  };
  const accountInfo = async (ctx: IqContext) => {
    await requireAccount(accounts, ctx);
    refuseNodes(ctx.payload);
    return infoQuery(xmpp.disco.identities('account'), xmpp.disco.features('account'));
  };
  const accountItems = async (ctx: IqContext) => {
    await requireAccount(accounts, ctx);
    refuseNodes(ctx.payload);
    return itemsQuery([]);
  };
  return [
    { type: 'get', ns: NS_DISCO_INFO, to: 'server', handler: serverInfo },
    { type: 'get', ns: NS_DISCO_ITEMS, to: 'server', handler: serverItemsOf },
    { type: 'get', ns: NS_DISCO_INFO, to: 'account', handler: accountInfo },
    { type: 'get', ns: NS_DISCO_ITEMS, to: 'account', handler: accountItems },
  ];
}

/** No entity here publishes nodes: a node query names something that does not exist. */
function refuseNodes(query: XmlElement): void {
  const node = query.attr('node');
  if (node !== undefined) throw new StanzaError('item-not-found', `there is no node '${node}' here`);
}

async function requireAccount(accounts: AccountService, ctx: IqContext): Promise<void> {
  if (ctx.self) return;
  if (!(await accounts.exists(ctx.to.user!, ctx.to.host))) throw new StanzaError('service-unavailable');
}
