/** The blocking command's IQs (XEP-0191 §3): blocklist get, block and unblock sets, by the account's clients. */
import { x, type IqContext, type IqHandlerRegistration, type XmlElement } from '@service/plugin-api';
import { normalize, type Blocking } from './blocking.js';
import { NS_BLOCKING } from './ns.js';
import { markListRequested } from './pushes.js';
import { StanzaError } from '@service/plugin-api';

export function blockingHandlers(blocking: Blocking): IqHandlerRegistration[] {
  const blocklist = async (ctx: IqContext) => {
    requireOwner(ctx);
    if (ctx.session) markListRequested(ctx.session);
    const jids = await blocking.list(ctx.to);
    return x('blocklist', { xmlns: NS_BLOCKING }, ...jids.map((jid) => x('item', { jid })));
  };
  const block = async (ctx: IqContext) => {
    requireOwner(ctx);
    const jids = itemsOf(ctx.payload);
    if (!jids.length) throw new StanzaError('bad-request', 'a block request needs at least one item');
    await blocking.block(ctx.to, jids);
  };
  const unblock = async (ctx: IqContext) => {
    requireOwner(ctx);
    const jids = itemsOf(ctx.payload);
    // No item: unblock everything (§3.5).
    await blocking.unblock(ctx.to, jids.length ? jids : undefined);
  };
  return [
    { type: 'get', ns: NS_BLOCKING, name: 'blocklist', to: 'account', handler: blocklist },
    { type: 'set', ns: NS_BLOCKING, name: 'block', to: 'account', handler: block },
    { type: 'set', ns: NS_BLOCKING, name: 'unblock', to: 'account', handler: unblock },
  ];
}

function requireOwner(ctx: IqContext): void {
  if (!ctx.self) throw new StanzaError('forbidden', "only the account's own clients manage its blocklist");
}

/** The normalized JIDs of the <item/> children; bad-request or jid-malformed for a bad item. */
function itemsOf(command: XmlElement): string[] {
  return command.getChildren('item').map((item) => {
    const jid = item.attr('jid');
    if (jid === undefined) throw new StanzaError('bad-request', "an item needs a 'jid' attribute");
    const normalized = normalize(jid);
    if (normalized === undefined) throw new StanzaError('jid-malformed', `'${jid}' is not a valid JID`);
    return normalized;
  });
}
