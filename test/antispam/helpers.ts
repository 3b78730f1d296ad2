/**
 * What the mod_antispam tests share: a chat message to alice@localhost, and the two outcomes they watch for
 * (alice gets it, or its sender gets it back with <policy-violation/>).
 */
import { expect } from 'chai';
import { next, xml, type Client, type Element } from '../support/xmpp.js';

export const body = (stanza: Element) => stanza.getChildText('body');
export const chat = (to: string, text: string) => xml('message', { to, type: 'chat' }, xml('body', {}, text));

/** The sender's copy of a refused message comes back as an error with this text. */
export const bounced = (client: Client, text: string, ms = 10_000) => next(client, (s) => s.is('message') && s.attrs.type === 'error' && body(s) === text, ms);

/** `from` sends `text` to alice@localhost, and `alice` receives it. */
export async function delivered(alice: Client, from: Client, text: string, ms = 10_000): Promise<Element> {
  const arrived = next(alice, (s) => s.is('message') && body(s) === text, ms);
  await from.send(chat('alice@localhost', text));
  return arrived;
}

/** `from` sends `text` to alice@localhost, and gets it back refused as spam (policy-violation). */
export async function refused(from: Client, text: string): Promise<void> {
  const error = bounced(from, text);
  await from.send(chat('alice@localhost', text));
  expect((await error).getChild('error')!.getChild('policy-violation', 'urn:ietf:params:xml:ns:xmpp-stanzas')).to.exist;
}
