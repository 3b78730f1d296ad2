/**
 * What the mod_muc_admin tests share: a server with mod_muc, mod_muc_admin and mod_admin_extra (over
 * HTTP, XML-RPC and servicectl), optionally on a given database; real clients that join rooms with raw
 * XEP-0045 stanzas; and a restart on the same data directory and database (persistence).
 */
import { expect } from 'chai';
import { Server } from '@service/kernel';
import { memoryLogger, serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { login, next, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import type { SqlSettings } from '../../kernel/src/storage/database.js';

export const ADMIN = 'admin@localhost:adminpass';
export const SERVICE = 'conference.localhost';
export const NS_MUC = 'http://jabber.org/protocol/muc';
export const NS_MUC_USER = 'http://jabber.org/protocol/muc#user';
export const USERS = ['alice', 'bob', 'carol', 'dave'] as const;

export function mucConfig(options: { sql?: SqlSettings; mucAdmin?: Record<string, unknown> } = {}): RawConfig {
  const raw = xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_muc: {}, mod_muc_admin: options.mucAdmin ?? {} });
  (raw.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
  return options.sql ? { ...raw, ...serverSqlConfig(options.sql) } : raw;
}

/** Starts the server, with admin@localhost and the test accounts (password `<user>-pw`). */
export async function startMucServer(config: RawConfig): Promise<TestServer> {
  const t = await TestServer.start(config);
  await t.bootstrapAdmin();
  for (const user of USERS) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
  return t;
}

/**
 * Stops the server and starts it again on the same configuration file, data directory and database.
 * TestServer has no restart of its own; its constructor is private to TypeScript only, so the new server
 * is wrapped the same way TestServer.start wraps one.
 */
export async function restart(t: TestServer): Promise<TestServer> {
  await t.server.shutdown();
  const logs: Array<Record<string, any>> = [];
  const server = await Server.start({ configFile: t.configFile, logger: memoryLogger(logs), onExit: () => {} });
  const Wrapper = TestServer as unknown as new (server: Server, dir: string, configFile: string, logs: Array<Record<string, any>>) => TestServer;
  return new Wrapper(server, t.dir, t.configFile, logs);
}

/** An admin API call that must succeed: its result. */
export async function ok(t: TestServer, command: string, args: Record<string, unknown>, prefix?: string): Promise<any> {
  const res = await t.api(command, args, { basic: ADMIN, ...(prefix ? { prefix } : {}) });
  expect(res.status, `${command} ${JSON.stringify(args)}: ${res.text}`).to.equal(200);
  return res.body;
}

/** An admin API call that must fail with `status` and a message matching `message`. */
export async function refused(t: TestServer, command: string, args: Record<string, unknown>, status: number, message: RegExp, prefix?: string): Promise<void> {
  const res = await t.api(command, args, { basic: ADMIN, ...(prefix ? { prefix } : {}) });
  expect(res.status, `${command} ${JSON.stringify(args)}: ${res.text}`).to.equal(status);
  expect(res.body.message, `${command} ${JSON.stringify(args)}`).to.match(message);
}

/** Logs in and becomes available (initial presence, so that messages to the bare JID reach it). */
export async function connect(t: TestServer, user: string, resource = 'desk'): Promise<Client> {
  const client = await login(t, { user, password: `${user}-pw`, resource });
  const own = next(client, (s) => s.is('presence') && s.attrs.from === client.jid?.toString());
  await client.send(xml('presence'));
  await own;
  return client;
}

/** Joins room@service as `nick` (XEP-0045 §7.2) and resolves with the self-presence (status 110). */
export async function join(client: Client, room: string, nick: string, service = SERVICE, extra: Element[] = []): Promise<Element> {
  const occupant = `${room}@${service}/${nick}`;
  const self = next(client, (s) => s.is('presence') && s.attrs.from === occupant && hasStatus(s, '110'), 10_000);
  const error = next(client, (s) => s.is('presence') && s.attrs.from === occupant && s.attrs.type === 'error', 10_000);
  await client.send(xml('presence', { to: occupant }, xml('x', { xmlns: NS_MUC }, ...extra)));
  const first = await Promise.race([self, error]);
  self.catch(() => {});
  error.catch(() => {});
  if (first.attrs.type === 'error') throw new Error(`joining ${occupant} failed: ${first.toString()}`);
  return first;
}

/** Leaves the room (unavailable presence) and waits for the server's answer. */
export async function leave(client: Client, room: string, nick: string, service = SERVICE): Promise<void> {
  const occupant = `${room}@${service}/${nick}`;
  const gone = next(client, (s) => s.is('presence') && s.attrs.from === occupant && s.attrs.type === 'unavailable', 10_000);
  await client.send(xml('presence', { to: occupant, type: 'unavailable' }));
  await gone;
}

/** Whether a MUC presence carries the status code. */
export function hasStatus(stanza: Element, code: string): boolean {
  const x = stanza.getChild('x', NS_MUC_USER);
  return !!x && x.getChildren('status').some((status) => status.attrs.code === code);
}

/** A groupchat message with `body` from the client into the room; resolves when it comes back to `echo`. */
export async function say(client: Client, room: string, body: string, echo: Client = client, service = SERVICE): Promise<Element> {
  const back = next(echo, (s) => s.is('message') && s.attrs.type === 'groupchat' && s.getChildText('body') === body, 10_000);
  await client.send(xml('message', { to: `${room}@${service}`, type: 'groupchat' }, xml('body', {}, body)));
  return back;
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until it equals `expected` (state another connection changes), then asserts it. */
export async function eventually<T>(read: () => Promise<T>, expected: T, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < deadline) {
    await pause(50);
    value = await read();
  }
  expect(value).to.deep.equal(expected);
}
