/**
 * What the PEP tests share: a client that announces entity capabilities (XEP-0115) with a correct or a
 * forged hash and answers the server's disco#info query about them, publishing and retrieving from real
 * clients, the stanza error of a refused request, and roster setup through the admin API. One place so
 * that each test reads as the behaviour it checks.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { TestServer } from '../support/server.js';
import { next, xml, type Client, type Element } from '../support/xmpp.js';

export { ADMIN, api, ok } from '../support/admin-api.js';
import { ok } from '../support/admin-api.js';
export const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
export const NS_EVENT = 'http://jabber.org/protocol/pubsub#event';
export const NS_OWNER = 'http://jabber.org/protocol/pubsub#owner';
export const NS_ERRORS = 'http://jabber.org/protocol/pubsub#errors';
export const NS_DISCO_INFO = 'http://jabber.org/protocol/disco#info';
export const NS_CAPS = 'http://jabber.org/protocol/caps';
export const NS_NICK = 'http://jabber.org/protocol/nick';
export const NS_AVATAR_DATA = 'urn:xmpp:avatar:data';
export const NS_AVATAR_METADATA = 'urn:xmpp:avatar:metadata';
export const NS_OMEMO_DEVICES = 'eu.siacs.conversations.axolotl.devicelist';
export const NS_BOOKMARKS = 'urn:xmpp:bookmarks:1';
const CAPS_NODE = 'https://example.org/pep-test';

/** What each client answers to disco#info: the capabilities it announced last. */
const answering = new WeakMap<Client, () => Element>();

/**
 * Announces capabilities with these features (a client identity, sha-1 per XEP-0115 §5.1), answers the
 * server's disco#info query, and resolves once the server has asked (or at once if it knew them). With
 * `forge`, the ver announced is not the hash of what the client answers.
 */
export async function announceCaps(client: Client, features: readonly string[], options: { forge?: boolean; expectQuery?: boolean } = {}): Promise<void> {
  const all = [NS_DISCO_INFO, NS_CAPS, ...features];
  const s = 'client/pc//pep-test<' + [...all].sort().map((f) => `${f}<`).join('');
  const ver = options.forge ? createHash('sha1').update('forged').digest('base64') : createHash('sha1').update(s).digest('base64');
  let asked!: () => void;
  const queried = new Promise<void>((resolve) => (asked = resolve));
  const answer = xml('query', { xmlns: NS_DISCO_INFO, node: `${CAPS_NODE}#${ver}` }, xml('identity', { category: 'client', type: 'pc', name: 'pep-test' }), ...all.map((f) => xml('feature', { var: f })));
  // @xmpp/client keeps the first handler of a namespace: it is registered once and answers what was announced last.
  if (!answering.has(client)) client.iqCallee.get(NS_DISCO_INFO, 'query', () => answering.get(client)!());
  answering.set(client, () => {
    asked();
    return answer;
  });
  await client.send(xml('presence', {}, xml('c', { xmlns: NS_CAPS, hash: 'sha-1', node: CAPS_NODE, ver })));
  if (options.expectQuery !== false) await withTimeout(queried, 10_000, 'the server did not ask for the capabilities');
  // The answer travels back and is verified and stored before notifications can use it.
  await new Promise((resolve) => setTimeout(resolve, 300));
}

function withTimeout<T>(promise: Promise<T>, ms: number, why: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(why)), ms))]);
}

export function publishOptions(fields: Record<string, string>): Element {
  return xml(
    'publish-options',
    {},
    xml(
      'x',
      { xmlns: 'jabber:x:data', type: 'submit' },
      xml('field', { var: 'FORM_TYPE', type: 'hidden' }, xml('value', {}, 'http://jabber.org/protocol/pubsub#publish-options')),
      ...Object.entries(fields).map(([name, value]) => xml('field', { var: name }, xml('value', {}, value))),
    ),
  );
}

/** Publishes to the client's own PEP node; resolves with the item id the server answered. */
export async function publish(client: Client, node: string, payload: Element, options: { id?: string; publishOptions?: Record<string, string> } = {}): Promise<string> {
  const answer = await client.iqCaller.request(
    xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('publish', { node }, xml('item', options.id ? { id: options.id } : {}, payload)), options.publishOptions ? publishOptions(options.publishOptions) : undefined)),
    10_000,
  );
  return answer.getChild('pubsub', NS_PUBSUB)!.getChild('publish')!.getChild('item')!.attrs.id!;
}

/** The items of `owner`'s node as `client` retrieves them. */
export async function items(client: Client, owner: string, node: string, options: { max?: number; ids?: string[] } = {}): Promise<Element[]> {
  const attrs: Record<string, string> = { node };
  if (options.max !== undefined) attrs.max_items = String(options.max);
  const answer = await client.iqCaller.request(xml('iq', { type: 'get', to: owner }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('items', attrs, ...(options.ids ?? []).map((id) => xml('item', { id }))))), 10_000);
  return answer.getChild('pubsub', NS_PUBSUB)!.getChild('items')!.getChildren('item');
}

export interface Refusal {
  condition: string;
  /** The pubsub#errors condition, if any. */
  specific: string | undefined;
  type: string;
}

/** The error of a request the server refuses. */
export async function refusal(request: Promise<unknown>): Promise<Refusal> {
  const err: any = await request.then(
    () => expect.fail('the request succeeded'),
    (e) => e,
  );
  expect(err?.condition, `a stanza error (${String(err)})`).to.be.a('string');
  const application: Element | undefined = err.application;
  return { condition: err.condition, specific: application?.attrs.xmlns === NS_ERRORS ? application.name : undefined, type: err.type };
}

/** The next PEP event from `from` about `node`. */
export function event(client: Client, from: string, node: string, ms = 10_000): Promise<Element> {
  return next(client, (s) => s.is('message') && s.attrs.from === from && s.getChild('event', NS_EVENT)?.getChildElements()[0]?.attrs.node === node, ms);
}


/** Makes `a` and `b` contacts with subscription both, in `groups` of each other's roster. */
export async function befriend(t: TestServer, a: string, b: string, groups: string[] = []): Promise<void> {
  await ok(t, 'add_rosteritem', { localuser: a, localhost: 'localhost', user: b, host: 'localhost', nick: b, groups, subs: 'both' });
  await ok(t, 'add_rosteritem', { localuser: b, localhost: 'localhost', user: a, host: 'localhost', nick: a, groups, subs: 'both' });
}
