/**
 * What the shared roster tests share: the configuration, clients that are online the way a real client is
 * (roster requested, then available), and reading rosters, pushes and presence as those clients see them.
 */
import { expect } from 'chai';
import type { RawConfig, TestServer } from '../support/server.js';
import { login, next, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { xmlrpcAsAdmin } from '../support/xmlrpc.js';
import { ADMIN, NS_ROSTER, rosterItems, view, type ItemView } from './roster-clients.js';

export { ADMIN, NS_ROSTER, rosterItems, view, type ItemView };

export const MODULES = { mod_roster: {}, mod_presence: {}, mod_shared_roster: {}, mod_admin_extra: {} };
/** Generous: other suites run at the same time. */
export const WAIT = 10_000;

export function config(modules: Record<string, unknown> = MODULES): RawConfig {
  const raw = xmppConfig(modules);
  (raw.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
  return raw;
}

export async function rosterGet(c: Client, ver?: string): Promise<Element> {
  return c.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_ROSTER, ver })));
}

export async function rosterSet(c: Client, item: Element): Promise<Element> {
  return c.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: NS_ROSTER }, item)));
}

export function isPush(stanza: Element, jid?: string): boolean {
  const item = stanza.is('iq') && stanza.attrs.type === 'set' ? stanza.getChild('query', NS_ROSTER)?.getChild('item') : undefined;
  return item !== undefined && (jid === undefined || item.attrs.jid === jid);
}

/** The next roster push about `jid`, as the pushed item. */
export async function nextPush(c: Client, jid: string): Promise<ItemView> {
  return pushedItem(await next(c, (s) => isPush(s, jid), WAIT));
}

export function pushedItem(push: Element): ItemView {
  return view(push.getChild('query', NS_ROSTER)!.getChild('item')!);
}

/** The next presence from `from` (a full JID, or a bare one for any of its resources) of `type`. */
export function nextPresence(c: Client, from: string, type?: string): Promise<Element> {
  return next(c, (s) => s.is('presence') && s.attrs.type === type && (s.attrs.from === from || s.attrs.from?.startsWith(`${from}/`) === true), WAIT);
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Logged in, roster requested with versioning (so it gets pushes) and, unless told otherwise, available. */
export async function online(t: TestServer, user: string, options: { host?: string; resource?: string; available?: boolean } = {}): Promise<Client> {
  const c = await login(t, { user, host: options.host, password: `${user}-pw`, resource: options.resource ?? 'desk' });
  await rosterGet(c, '');
  if (options.available ?? true) await c.send(xml('presence'));
  return c;
}

export async function expectIqError(request: Promise<unknown>, condition: string): Promise<void> {
  try {
    await request;
  } catch (err) {
    expect((err as { condition?: string }).condition).to.equal(condition);
    return;
  }
  expect.fail(`expected <${condition}/>`);
}

export { xmlrpcAsAdmin };
