/**
 * The carbon copy itself (XEP-0280 §§5–6, XEP-0297): a message from the account's bare JID to one of its
 * resources, of the original's type, with <received/> or <sent/> around <forwarded/> around the original.
 */
import { NS, x, type XmlElement } from '@service/plugin-api';
import { NS_CARBONS, NS_FORWARD } from './ns.js';

export type CarbonDirection = 'received' | 'sent';

export function carbonCopy(direction: CarbonDirection, original: XmlElement, account: string, recipient: string): XmlElement {
  // Inside <forwarded/> the message needs its own namespace declaration: it would otherwise inherit
  // urn:xmpp:forward:0 when serialized.
  const copy = original.clone().setAttr('xmlns', NS.CLIENT);
  return x(
    'message',
    { from: account, to: recipient, type: original.attr('type') },
    x(direction, { xmlns: NS_CARBONS }, x('forwarded', { xmlns: NS_FORWARD }, copy)),
  );
}
