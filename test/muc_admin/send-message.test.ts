/**
 * mod_admin_extra's send_message of type groupchat when mod_muc runs: to a room, the message goes into the
 * room on behalf of `from` when `from` is the full JID of an occupant, the bare JID of a service admin or
 * the bare JID of a subscriber, and the occupants get it; anyone else is refused naming `from`, and
 * nobody gets anything (proved by an allowed message sent after, which does arrive). A groupchat message
 * to an account's resource still goes as before.
 */
import { expect } from 'chai';
import type { TestServer } from '../support/server.js';
import { expectSilence, next, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import { connect, join, mucConfig, ok, refused, SERVICE, startMucServer } from './support.js';

const ROOM = `news@${SERVICE}`;
const isBody = (body: string) => (s: Element) => s.is('message') && s.attrs.type === 'groupchat' && s.getChildText('body') === body;

describe('send_message groupchat to a MUC room', () => {
  let t: TestServer;
  let alice: Client;
  let bob: Client;
  const send = (from: string, body: string, to = ROOM) => t.api('send_message', { type: 'groupchat', from, to, subject: '', body }, { basic: 'admin@localhost:adminpass' });

  before(async () => {
    t = await startMucServer(mucConfig());
    expect(await ok(t, 'create_room_with_opts', { room: 'news', service: SERVICE, host: 'localhost', options: [{ name: 'allow_subscription', value: 'true' }] })).to.equal(0);
    alice = await connect(t, 'alice');
    bob = await connect(t, 'bob');
    await join(alice, 'news', 'Alice');
    await join(bob, 'news', 'Bob');
    expect(await ok(t, 'subscribe_room', { user: 'carol', host: 'localhost', nick: 'Caro', room: 'news', service: SERVICE, nodes: ['urn:xmpp:mucsub:nodes:messages'] })).to.deep.equal([
      'urn:xmpp:mucsub:nodes:messages',
    ]);
  });
  after(async () => {
    await stopAll(alice, bob);
    await t?.stop();
  });

  it("from an occupant's full JID: the occupants get it from the occupant's nick", async () => {
    const got = next(bob, isBody('from alice'), 10_000);
    expect((await send('alice@localhost/desk', 'from alice')).body).to.equal(0);
    expect((await got).attrs.from).to.equal(`${ROOM}/Alice`);
  });

  it("from a service admin's or a subscriber's bare JID: the occupants get it", async () => {
    const byAdmin = next(bob, isBody('from the admin'), 10_000);
    expect((await send('admin@localhost', 'from the admin')).body).to.equal(0);
    await byAdmin;
    const bySubscriber = next(bob, isBody('from a subscriber'), 10_000);
    expect((await send('carol@localhost', 'from a subscriber')).body).to.equal(0);
    await bySubscriber;
    const history = await ok(t, 'get_room_history', { room: 'news', service: SERVICE });
    expect(history.map((entry: { message: string }) => entry.message).join('\n'))
      .to.contain('from the admin')
      .and.contain('from a subscriber');
  });

  it('from anyone else it is refused naming from, and nobody gets it', async () => {
    const silence = expectSilence(bob, isBody('must not arrive'), 'a refused groupchat message');
    const cases: Array<[string, RegExp]> = [
      [
        'dave@localhost/desk',
        /^from: dave@localhost\/desk may not send to room news@conference\.localhost .*the full JID of an occupant, the bare JID of a service admin, or the bare JID of a subscribed user$/,
      ],
      // An occupant's bare JID is neither its full JID nor a subscriber's.
      ['alice@localhost', /^from: alice@localhost may not send to room news@conference\.localhost/],
      ['alice@localhost/phone', /^from: alice@localhost\/phone may not send/],
    ];
    for (const [from, message] of cases) {
      const res = await send(from, 'must not arrive');
      expect(res.status, res.text).to.equal(400);
      expect(res.body.message).to.match(message);
    }
    await silence.proveWith(() => send('alice@localhost/desk', 'the probe'), isBody('the probe'));
  });

  it('a room that does not exist is a 404; an occupant JID as `to` is a 400', async () => {
    await refused(t, 'send_message', { type: 'groupchat', from: 'admin@localhost', to: `ghost@${SERVICE}`, subject: '', body: 'x' }, 404, /ghost/);
    await refused(t, 'send_message', { type: 'groupchat', from: 'admin@localhost', to: `${ROOM}/Bob`, subject: '', body: 'x' }, 400, /^argument 'to': a groupchat message goes to the room's bare JID/);
  });

  it('a groupchat message to an account resource goes as before', async () => {
    const got = next(bob, isBody('direct'), 10_000);
    expect((await send(`${ROOM}/bot`, 'direct', 'bob@localhost/desk')).body).to.equal(0);
    expect((await got).attrs.from).to.equal(`${ROOM}/bot`);
    await bob.send(xml('presence'));
  });
});
