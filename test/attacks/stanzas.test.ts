/**
 * Spoofed senders: a logged-in client writes a `from` that is not its own (another account, a resource of
 * someone else, another resource of its own account, a server JID, a malformed JID) on a message, a presence
 * or an IQ. RFC 6120 §8.1.2.1 makes the server check it: the stream is closed with <invalid-from/> and the
 * stanza goes nowhere. The same stanzas without the spoof (no `from`, or the sender's own JID in any
 * spelling) are delivered first, over the same path, so "nothing arrived" means something.
 */
import { expect } from 'chai';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { TestServer } from '../support/server.js';
import { collect, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

describe('attacks: stanzas with a spoofed from', function () {
  this.timeout(60_000);
  let t: TestServer;
  let port: number;
  let bob: Client;
  let carol: Client;
  let seenByBob: Element[];
  let resources = 0;
  const peers: RawXmppPeer[] = [];

  /** alice on a raw stream, bound to a fresh resource. */
  async function alice(): Promise<{ peer: RawXmppPeer; jid: string }> {
    const peer = await RawXmppPeer.connect(port);
    peers.push(peer);
    const jid = await peer.login('alice', 'alice-pw', { resource: `r${++resources}` });
    return { peer, jid };
  }

  /**
   * A message from carol that bob receives after whatever was sent before it: once it is there, a stanza
   * processed earlier would have arrived too.
   */
  async function barrier(): Promise<void> {
    const body = `barrier ${Date.now()} ${Math.random()}`;
    const arrived = next(bob, (s) => s.is('message') && s.getChildText('body') === body);
    await carol.send(xml('message', { to: 'bob@localhost/b', type: 'chat' }, xml('body', {}, body)));
    await arrived;
  }

  const bobGot = (predicate: (s: Element) => boolean) => seenByBob.filter(predicate);

  before(async () => {
    const config = xmppConfig();
    t = await TestServer.start(config);
    port = t.server.portOf('service_c2s')!;
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
    carol = await login(t, { user: 'carol', password: 'carol-pw', resource: 'c' });
    seenByBob = collect(bob);
  });

  afterEach(() => {
    for (const peer of peers.splice(0)) peer.destroy();
  });

  after(async () => {
    await stopAll(bob, carol);
    await t?.stop();
  });

  it('delivers alice\'s message, presence and IQ to bob with no from, or her own JID in any spelling, stamped with her full JID', async () => {
    const { peer, jid } = await alice();
    const resource = jid.split('/')[1]!;
    const own = [undefined, jid, 'alice@localhost', `ALICE@LocalHost/${resource}`, 'Alice@localhost'];
    for (const [i, from] of own.entries()) {
      const fromAttr = from === undefined ? '' : ` from='${from}'`;
      const body = `honest ${i}`;
      const got = next(bob, (s) => s.is('message') && s.getChildText('body') === body);
      peer.write(`<message to='bob@localhost/b' type='chat'${fromAttr}><body>${body}</body></message>`);
      expect((await got).attrs.from, `from=${from}`).to.equal(jid);
    }
    const presence = next(bob, (s) => s.is('presence') && s.attrs.from === jid && s.getChildText('status') === 'directed');
    peer.write(`<presence to='bob@localhost/b' from='${jid}'><status>directed</status></presence>`);
    await presence;
    const iq = next(bob, (s) => s.is('iq') && s.attrs.id === 'honest-iq');
    peer.write(`<iq type='get' id='honest-iq' to='bob@localhost/b' from='${jid}'><query xmlns='urn:example:honest'/></iq>`);
    expect((await iq).attrs.from).to.equal(jid);
    expect(peer.isClosed).to.equal(false);
  });

  const spoofs: Array<{ from: string; what: string }> = [
    { from: 'carol@localhost', what: 'another account (bare)' },
    { from: 'carol@localhost/c', what: 'a resource of someone else' },
    { from: 'bob@localhost/b', what: 'the recipient itself' },
    { from: 'localhost', what: 'the server' },
    { from: 'example.com', what: 'another served domain' },
    { from: 'localhost/admin', what: 'a server JID with a resource' },
    { from: 'pubsub.localhost', what: 'a component-like JID' },
    { from: 'alice@example.com', what: 'alice on another virtual host' },
    { from: 'alice@localhost/someone-else', what: 'another resource of alice' },
    { from: 'alice@@localhost', what: 'a malformed JID' },
    { from: '', what: 'an empty from' },
  ];

  for (const { from, what } of spoofs) {
    it(`closes the stream with <invalid-from/> and delivers nothing: from='${from}' (${what})`, async () => {
      for (const stanza of ['message', 'presence', 'iq'] as const) {
        const { peer, jid } = await alice();
        const mark = `spoof ${stanza} ${from} ${Math.random()}`;
        const text =
          stanza === 'message'
            ? `<message to='bob@localhost/b' type='chat' from='${from}'><body>${mark}</body></message>`
            : stanza === 'presence'
              ? `<presence to='bob@localhost/b' from='${from}'><status>${mark}</status></presence>`
              : `<iq type='get' id='${mark}' to='bob@localhost/b' from='${from}'><query xmlns='urn:example:spoof'/></iq>`;
        peer.write(text);
        const error = await peer.streamError();
        expect(error.condition, `${stanza}: ${error.text}`).to.equal('invalid-from');
        expect(error.text).to.contain(jid);
        await peer.waitClosed();
        await barrier();
        const leaked = bobGot((s) => s.getChildText('body') === mark || s.getChildText('status') === mark || s.attrs.id === mark);
        expect(leaked.map((s) => s.toString()), `${stanza} from='${from}' reached bob`).to.deep.equal([]);
      }
    });
  }

  it('a spoofed stanza after honest ones: those before it arrive, it and everything after it do not', async () => {
    const { peer, jid } = await alice();
    const before = next(bob, (s) => s.is('message') && s.getChildText('body') === 'before');
    peer.write(
      "<message to='bob@localhost/b' type='chat'><body>before</body></message>" +
        "<message to='bob@localhost/b' type='chat' from='carol@localhost/c'><body>spoofed</body></message>" +
        "<message to='bob@localhost/b' type='chat'><body>after</body></message>",
    );
    expect((await before).attrs.from).to.equal(jid);
    expect((await peer.streamError()).condition).to.equal('invalid-from');
    await peer.waitClosed();
    await barrier();
    expect(bobGot((s) => ['spoofed', 'after'].includes(s.getChildText('body') ?? '')).map(String)).to.deep.equal([]);
  });

  it('alice is not left online as anyone after the spoof: her session is gone and nobody was added', async () => {
    const { peer, jid } = await alice();
    const resources = async (user: string) => {
      const res = await t.api('user_resources', { user, host: 'localhost' }, { basic: 'admin@localhost:adminpass' });
      expect(res.status, res.text).to.equal(200);
      return res.body as string[];
    };
    expect(await resources('alice')).to.include(jid.split('/')[1]);
    peer.write("<message to='bob@localhost/b' from='carol@localhost/evil'><body>x</body></message>");
    expect((await peer.streamError()).condition).to.equal('invalid-from');
    await peer.waitClosed();
    expect(await resources('carol')).to.deep.equal(['c']);
    for (let i = 0; i < 50 && (await resources('alice')).includes(jid.split('/')[1]!); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await resources('alice')).to.not.include(jid.split('/')[1]);
  });
});
