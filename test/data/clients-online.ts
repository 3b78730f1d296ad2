/**
 * What the data commands' tests keep connected while a command runs: two accounts online and available, so
 * that each test can show the server still serves them (they chat) after the command.
 */
import type { TestServer } from '../support/server.js';
import { login, xml, type Client } from '../support/xmpp.js';

export async function clientsOnline(t: TestServer): Promise<{ alice: Client; bob: Client }> {
  await t.register('alice', 'localhost', 'alicepass');
  await t.register('bob', 'localhost', 'bobpass');
  const alice = await login(t, { user: 'alice', password: 'alicepass' });
  const bob = await login(t, { user: 'bob', password: 'bobpass' });
  await alice.send(xml('presence'));
  await bob.send(xml('presence'));
  return { alice, bob };
}
