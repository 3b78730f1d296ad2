/**
 * What the roster command tests share: a server with mod_admin_extra, mod_roster and mod_presence (plus an
 * XML-RPC listener), logged-in clients that asked for their roster, and readers for roster pushes and
 * presence as those clients receive them.
 */
import { xml, login, next, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import type { RawConfig, TestServer } from '../support/server.js';
import { xmlrpcAsAdmin, type XmlRpcValue } from '../support/xmlrpc.js';

export const NS_ROSTER = 'jabber:iq:roster';
export const ADMIN = 'admin@localhost:adminpass';

/** xmppConfig with the roster commands' modules and an XML-RPC listener; `maxRosterSize` keeps limits testable. */
export function rosterConfig(maxRosterSize = 1000): RawConfig {
  const config = xmppConfig({ mod_admin_extra: {}, mod_roster: { max_roster_size: maxRosterSize }, mod_presence: {} });
  (config.listen as unknown[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
  return config;
}

export interface ItemView {
  jid: string;
  subscription: string;
  name?: string;
  ask?: string;
  groups?: string[];
}

/** A roster item element as a plain object, with only the attributes it has. */
export function view(item: Element): ItemView {
  const out: ItemView = { jid: item.attrs.jid!, subscription: item.attrs.subscription! };
  if (item.attrs.name !== undefined) out.name = item.attrs.name;
  if (item.attrs.ask !== undefined) out.ask = item.attrs.ask;
  const groups = item.getChildren('group').map((g) => g.text());
  if (groups.length) out.groups = groups;
  return out;
}

export async function rosterItems(c: Client): Promise<ItemView[]> {
  const result = await c.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_ROSTER })));
  return result.getChild('query', NS_ROSTER)!.getChildren('item').map(view);
}

/** Logged in as `user` (password `<user>-pw`), roster requested so that it gets pushes, and available unless told otherwise. */
export async function online(t: TestServer, user: string, resource: string, available = true): Promise<Client> {
  const c = await login(t, { user, password: `${user}-pw`, resource });
  await rosterItems(c);
  if (available) await c.send(xml('presence'));
  return c;
}

export function isPush(stanza: Element, jid?: string): boolean {
  const item = stanza.is('iq') && stanza.attrs.type === 'set' ? stanza.getChild('query', NS_ROSTER)?.getChild('item') : undefined;
  return item !== undefined && (jid === undefined || item.attrs.jid === jid);
}

export function pushedItem(push: Element): ItemView {
  return view(push.getChild('query', NS_ROSTER)!.getChild('item')!);
}

/** The next roster push about `jid`, with `subscription` if given (generous timeout: other suites run at the same time). */
export async function nextPush(c: Client, jid: string, subscription?: string): Promise<ItemView> {
  return pushedItem(await next(c, (s) => isPush(s, jid) && (subscription === undefined || pushedItem(s).subscription === subscription), 15_000));
}

export function nextPresence(c: Client, type: string | undefined, from: string): Promise<Element> {
  return next(c, (s) => s.is('presence') && s.attrs.type === type && s.attrs.from === from, 15_000);
}

/**
 * A round trip to the server: every stanza the server sent before answering has arrived once it returns
 * (an IQ nobody handles comes back as an error, which is all we need).
 */
export async function sync(c: Client): Promise<void> {
  await c.iqCaller.request(xml('iq', { type: 'get', to: 'localhost' }, xml('query', { xmlns: 'urn:example:sync' }))).catch(() => undefined);
}

// ---------------------------------------------------------------------------------------------------------
// XML-RPC, as ejabberd's clients call it

export type Value = XmlRpcValue;

/** An administrator's XML-RPC call (admin's password, admin: true), answering the result or the fault. */
export async function xmlrpcAdmin(t: TestServer, method: string, args: Record<string, Value>): Promise<{ result?: Value; fault?: { faultCode: number; faultString: string } }> {
  const { result, fault } = await xmlrpcAsAdmin(t, method, args);
  return fault ? { fault } : { result };
}
