/**
 * What the MUC tests share: a server with mod_muc (and presence, so that a client going away leaves its
 * rooms), accounts, joining a room and waiting for the self-presence, and reading muc#user status codes
 * and items from what clients receive.
 */
import { expect } from 'chai';
import { TestServer, type RawConfig } from '../support/server.js';
import { login, next, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import type { MucApi } from '@service/mod_muc/api';

export const SERVICE = 'conference.localhost';
export const NS_MUC = 'http://jabber.org/protocol/muc';
export const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';
export const NS_MUC_ADMIN = 'http://jabber.org/protocol/muc#admin';
export const NS_MUC_OWNER = 'http://jabber.org/protocol/muc#owner';
export const NS_DATA = 'jabber:x:data';
export const NS_MUCSUB = 'urn:xmpp:mucsub:0';

export function mucConfig(muc: Record<string, unknown> = {}, extra: RawConfig = {}): RawConfig {
  return { ...xmppConfig({ mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_muc: muc }), ...extra };
}

export async function startMuc(muc: Record<string, unknown> = {}, users: readonly string[] = [], extra: RawConfig = {}, probe = false): Promise<TestServer> {
  const config = mucConfig(muc, extra);
  if (probe) (config.modules as Record<string, unknown>).mod_muc_probe = {};
  const t = await TestServer.start(config, probe ? { prepare: installProbe } : {});
  await t.bootstrapAdmin();
  for (const user of users) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
  return t;
}

export async function user(t: TestServer, name: string, resource = 'res'): Promise<Client> {
  const client = await login(t, { user: name, password: `${name}-pw`, resource });
  await client.send(xml('presence'));
  return client;
}

export function fullJid(client: Client): string {
  return String((client as unknown as { jid: unknown }).jid);
}

export function codes(stanza: Element): number[] {
  const x = stanza.getChild('x', NS_MUC_USER);
  return (x?.getChildren('status') ?? []).map((s) => Number(s.attrs.code));
}

export function item(stanza: Element): Record<string, string> {
  return (stanza.getChild('x', NS_MUC_USER)?.getChild('item')?.attrs ?? {}) as Record<string, string>;
}

export function isFrom(from: string) {
  return (s: Element) => s.attrs.from === from;
}

/** Joins room@SERVICE/nick and resolves with the self-presence (status 110) or the error presence. */
export async function join(client: Client, room: string, nick: string, options: { password?: string; history?: Record<string, string>; service?: string } = {}): Promise<Element> {
  const to = `${room}@${options.service ?? SERVICE}/${nick}`;
  const got = next(client, (s) => s.is('presence') && s.attrs.from === to && (s.attrs.type === 'error' || codes(s).includes(110)));
  await client.send(
    xml(
      'presence',
      { to },
      xml('x', { xmlns: NS_MUC }, options.password !== undefined ? xml('password', {}, options.password) : undefined, options.history ? xml('history', options.history) : undefined),
    ),
  );
  return got;
}

/** Joins and expects success; resolves once the subject (the last thing of a join) has arrived. */
export async function enter(client: Client, room: string, nick: string, options: { password?: string; history?: Record<string, string> } = {}): Promise<Element> {
  const subject = next(client, (s) => s.is('message') && s.attrs.type === 'groupchat' && s.getChild('subject') !== undefined && s.attrs.from?.startsWith(`${room}@${SERVICE}`));
  const self = await join(client, room, nick, options);
  expect(self.attrs.type, String(self)).to.equal(undefined);
  await subject;
  return self;
}

/** Creates an instant room (join, then the empty submit form) with the client as owner. */
export async function instantRoom(client: Client, room: string, nick: string): Promise<void> {
  const self = await enter(client, room, nick);
  expect(codes(self)).to.include(201);
  await client.iqCaller.request(xml('iq', { type: 'set', to: `${room}@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('x', { xmlns: NS_DATA, type: 'submit' }))));
}

/** Submits configuration fields (var → values) as the owner. */
export async function configure(client: Client, room: string, fields: Record<string, string | string[]>): Promise<Element> {
  const form = xml(
    'x',
    { xmlns: NS_DATA, type: 'submit' },
    xml('field', { var: 'FORM_TYPE' }, xml('value', {}, 'http://jabber.org/protocol/muc#roomconfig')),
    ...Object.entries(fields).map(([name, value]) => xml('field', { var: name }, ...(Array.isArray(value) ? value : [value]).map((v) => xml('value', {}, v)))),
  );
  return client.iqCaller.request(xml('iq', { type: 'set', to: `${room}@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, form)));
}

/** An IQ that must fail: resolves with its error condition. */
export async function iqError(client: Client, iq: Element): Promise<string> {
  const err = await client.iqCaller.request(iq).then(
    (r: Element) => {
      throw new Error(`expected an error, got ${String(r)}`);
    },
    (e: { condition?: string; message: string }) => e,
  );
  return err.condition ?? err.message;
}

export function groupchat(room: string, body: string): Element {
  return xml('message', { to: `${room}@${SERVICE}`, type: 'groupchat', id: `gc-${body}` }, xml('body', {}, body));
}

export function errorCondition(stanza: Element): string | undefined {
  const error = stanza.getChild('error');
  return error?.children.find((c): c is Element => typeof c !== 'string' && c.attrs.xmlns === 'urn:ietf:params:xml:ns:xmpp-stanzas')?.name;
}

/** The directory of the probe plugin that hands MucApi to the tests (see probe/mod_muc_probe). */
const PROBE = new URL('./probe/mod_muc_probe/', import.meta.url).pathname;

/** Copies the probe plugin into a test server's data directory (TestServer.start's `prepare`). */
export async function installProbe(dataDir: string): Promise<void> {
  const { cp, mkdir } = await import('node:fs/promises');
  await mkdir(`${dataDir}/plugins`, { recursive: true });
  await cp(PROBE, `${dataDir}/plugins/mod_muc_probe`, { recursive: true });
}

/** The running MucApi, as the probe plugin received it through ctx.use(mucService). */
export function mucApi(): MucApi {
  const api = (globalThis as { mucProbeApi?: MucApi }).mucProbeApi;
  if (!api) throw new Error('the mod_muc_probe plugin is not running');
  return api;
}
