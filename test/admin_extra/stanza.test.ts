/**
 * mod_admin_extra's stanza commands with real clients: send_message (each type, subjects, offline
 * storage, groupchat without MUC), send_stanza (messages, IQs and presence routed between two JIDs),
 * send_stanza_c2s (a connected session sends as its client would; a detached stream-management session
 * cannot), privacy_set (through mod_privacy, on each database; its pushes and its enforcement seen by
 * clients). Over HTTP, and a sample through servicectl and XML-RPC. Bad input is a clear error that
 * sends nothing.
 */
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { testDatabases } from '../support/databases.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { request, serverSqlConfig, TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const NS_ROSTER = 'jabber:iq:roster';
const NS_PRIVACY = 'jabber:iq:privacy';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isMessageWith(body: string) {
  return (s: Element) => s.is('message') && s.getChildText('body') === body;
}

async function available(c: Client, priority = 0): Promise<void> {
  const own = next(c, (s) => s.is('presence') && s.attrs.from === c.jid?.toString());
  await c.send(xml('presence', {}, xml('priority', {}, String(priority))));
  await own;
}

describe('mod_admin_extra: stanzas', () => {
  let t: TestServer;
  let xmlrpcUrl: string;
  const clients: Client[] = [];
  const api = async (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const ok = async (command: string, args: Record<string, unknown>) => {
    const res = await api(command, args);
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };
  const connect = async (user: string, resource: string, priority?: number) => {
    const c = await login(t, { user, password: `${user}-pw`, resource });
    clients.push(c);
    if (priority !== undefined) await available(c, priority);
    return c;
  };
  const waitResources = async (user: string, expected: string[]) => {
    for (let i = 0; i < 100; i++) {
      if (JSON.stringify(await ok('user_resources', { user, host: 'localhost' })) === JSON.stringify(expected)) return;
      await pause(50);
    }
    expect(await ok('user_resources', { user, host: 'localhost' })).to.deep.equal(expected);
  };
  /**
   * Each case is an error with that status and message; afterwards nobody received a message or IQ before a
   * message the API does send them (proof that their connections would have shown one).
   */
  const refusedAll = async (command: string, cases: Array<[Record<string, unknown>, number, RegExp]>, watched: Client[]) => {
    const silences = watched.map((c, i) => expectSilence(c, (s) => !s.is('presence'), `a message or IQ at client ${i}`));
    for (const [args, status, message] of cases) {
      const res = await api(command, args);
      expect(res.status, JSON.stringify(args)).to.equal(status);
      expect(res.body.message, JSON.stringify(args)).to.match(message);
    }
    for (const [i, silence] of silences.entries()) {
      const body = `probe for client ${i}`;
      await silence.proveWith(() => ok('send_message', { type: 'chat', from: 'admin@localhost', to: watched[i]!.jid!.toString(), subject: '', body }), isMessageWith(body));
    }
  };

  before(async () => {
    const config = xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_offline: {}, mod_privacy: {}, mod_stream_mgmt: { resume_timeout: 60 } });
    (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    xmlrpcUrl = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
  });
  afterEach(async () => {
    await stopAll(...clients.splice(0));
    await waitResources('alice', []);
    await waitResources('bob', []);
  });
  after(() => t.stop());

  describe('send_message', () => {
    it('sends a headline with its subject to every available resource of a bare JID', async () => {
      const laptop = await connect('alice', 'laptop', 5);
      const phone = await connect('alice', 'phone', 1);
      const got = [laptop, phone].map((c) => next(c, isMessageWith('In 5 minutes')));
      expect(await ok('send_message', { type: 'headline', from: 'admin@localhost', to: 'alice@localhost', subject: 'Restart', body: 'In 5 minutes' })).to.equal(0);
      for (const message of await Promise.all(got)) {
        expect(message.attrs).to.deep.include({ type: 'headline', from: 'admin@localhost', to: 'alice@localhost' });
        expect(message.attrs.id).to.be.a('string').and.not.equal('');
        expect(message.getChildText('subject')).to.equal('Restart');
      }
    });

    it('sends a chat to the resource with the highest priority, leaving out an empty subject', async () => {
      const laptop = await connect('alice', 'laptop', 5);
      const phone = await connect('alice', 'phone', 1);
      const atPhone = expectSilence(phone, (s) => s.is('message'), 'the chat at the lower-priority resource');
      const got = next(laptop, isMessageWith('hi alice'));
      expect(await ok('send_message', { type: 'chat', from: 'bob@localhost/desk', to: 'alice@localhost', subject: '', body: 'hi alice' })).to.equal(0);
      const message = await got;
      expect(message.attrs).to.deep.include({ type: 'chat', from: 'bob@localhost/desk' });
      expect(message.getChild('subject')).to.equal(undefined);
      await atPhone.proveWith(() => ok('send_message', { type: 'chat', from: 'bob@localhost/desk', to: 'alice@localhost/phone', subject: '', body: 'hi phone' }), isMessageWith('hi phone'));
    });

    it('a normal message to an offline account is stored and delivered when it comes online (mod_offline)', async () => {
      expect(await ok('send_message', { type: 'normal', from: 'admin@localhost', to: 'carol@localhost', subject: 'Welcome', body: 'stored for later' })).to.equal(0);
      const carol = await connect('carol', 'home');
      const got = next(carol, isMessageWith('stored for later'));
      await carol.send(xml('presence'));
      const message = await got;
      expect(message.attrs).to.deep.include({ from: 'admin@localhost', type: 'normal' });
      expect(message.getChildText('subject')).to.equal('Welcome');
    });

    it('without MUC, a groupchat message goes to a connected resource (full JID); to a bare JID or a resource not connected it is refused', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const got = next(laptop, isMessageWith('room news'));
      expect(await ok('send_message', { type: 'groupchat', from: 'room@conference.localhost/bot', to: 'alice@localhost/laptop', subject: '', body: 'room news' })).to.equal(0);
      expect((await got).attrs).to.deep.include({ type: 'groupchat', from: 'room@conference.localhost/bot' });
      await refusedAll(
        'send_message',
        [
          [{ type: 'groupchat', from: 'admin@localhost', to: 'alice@localhost', subject: '', body: 'x' }, 400, /^argument 'to': a groupchat message to an account goes to one of its connected resources \(a full JID\), not to alice@localhost$/],
          [{ type: 'groupchat', from: 'admin@localhost', to: 'alice@localhost/tablet', subject: '', body: 'x' }, 404, /^alice@localhost has no session with resource 'tablet'$/],
        ],
        [laptop],
      );
    });

    it('a recipient on a domain nobody serves gets nothing, and the error goes back to the sender', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const error = next(laptop, (s) => s.is('message') && s.attrs.type === 'error');
      expect(await ok('send_message', { type: 'chat', from: 'alice@localhost/laptop', to: 'someone@remote.example', subject: '', body: 'far away' })).to.equal(0);
      expect((await error).getChild('error')!.getChild('remote-server-not-found')).to.not.equal(undefined);
    });

    it('refuses a bad type or JID, an unknown account, the server itself and an empty message, sending nothing', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const base = { type: 'chat', from: 'admin@localhost', to: 'alice@localhost', subject: '', body: 'x' };
      await refusedAll(
        'send_message',
        [
          [{ ...base, type: 'announcement' }, 400, /^type must be one of normal, chat, headline, groupchat, got 'announcement'$/],
          [{ ...base, type: 'error' }, 400, /^type must be one of/],
          [{ ...base, from: 'a@b@c' }, 400, /^from: 'a@b@c' is not a valid JID/],
          [{ ...base, to: '' }, 400, /^to: '' is not a valid JID/],
          [{ ...base, body: 'b'.repeat(300_000) }, 400, /^argument 'body': the message would be \d+ bytes, larger than the server's stanza limit of 262144 bytes$/],
          [{ ...base, to: 'nobody@localhost' }, 404, /^account nobody@localhost does not exist$/],
          [{ ...base, to: 'localhost' }, 400, /^argument 'to': localhost is this server, which takes no messages/],
          [{ ...base, body: '' }, 400, /^argument 'body': a message needs a subject or a body: both are empty$/],
          [{ type: 'chat', from: 'admin@localhost', to: 'alice@localhost', body: 'x' }, 400, /missing argument 'subject'/],
        ],
        [laptop],
      );
    });
  });

  describe('send_stanza', () => {
    it('routes a message with any payload from and to the given JIDs, replacing the stanza\'s own', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const got = next(laptop, (s) => s.is('message') && s.getChild('ext', 'urn:example:ext') !== undefined);
      const stanza = "<message from='mallory@localhost' to='carol@localhost' type='chat' id='s1'><ext xmlns='urn:example:ext' attr='value'>text &amp; more</ext></message>";
      expect(await ok('send_stanza', { from: 'admin@localhost', to: 'alice@localhost/laptop', stanza })).to.equal(0);
      const message = await got;
      expect(message.attrs).to.deep.include({ from: 'admin@localhost', to: 'alice@localhost/laptop', type: 'chat', id: 's1' });
      expect(message.getChild('ext', 'urn:example:ext')!.attrs.attr).to.equal('value');
      expect(message.getChild('ext', 'urn:example:ext')!.text()).to.equal('text & more');
    });

    it('routes an IQ to a connected resource; its answer goes back to the sender', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const desk = await connect('bob', 'desk', 0);
      const asked = next(desk, (s) => s.is('iq') && s.attrs.id === 'v1');
      const answered = next(laptop, (s) => s.is('iq') && s.attrs.id === 'v1');
      const stanza = "<iq xmlns='jabber:client' type='get' id='v1'><query xmlns='urn:example:unknown'/></iq>";
      expect(await ok('send_stanza', { from: 'alice@localhost/laptop', to: 'bob@localhost/desk', stanza })).to.equal(0);
      expect((await asked).attrs.from).to.equal('alice@localhost/laptop');
      // The client does not know the namespace: it answers with an error, which reaches alice.
      const answer = await answered;
      expect(answer.attrs).to.deep.include({ from: 'bob@localhost/desk', type: 'error' });
    });

    it('routes presence (directed presence from bob reaches alice\'s available resources)', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const got = next(laptop, (s) => s.is('presence') && s.attrs.from === 'bob@localhost/desk');
      expect(await ok('send_stanza', { from: 'bob@localhost/desk', to: 'alice@localhost', stanza: '<presence><show>chat</show></presence>' })).to.equal(0);
      expect((await got).getChildText('show')).to.equal('chat');
    });

    it('refuses XML that is not one well-formed stanza, naming the problem, and an unknown recipient, sending nothing', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const base = { from: 'admin@localhost', to: 'alice@localhost/laptop' };
      await refusedAll(
        'send_stanza',
        [
          [{ ...base, stanza: '<message><body>unclosed</message>' }, 400, /^stanza is not one valid XML element: /],
          [{ ...base, stanza: 'just text' }, 400, /^stanza is not one valid XML element: /],
          [{ ...base, stanza: '<message/><message/>' }, 400, /^stanza is not one valid XML element: expected one element, got several$/],
          [{ ...base, stanza: "<!DOCTYPE x [<!ENTITY a 'b'>]><message/>" }, 400, /^stanza is not one valid XML element: /],
          [{ ...base, stanza: '<foo/>' }, 400, /^stanza must be a <message\/>, <presence\/> or <iq\/> in jabber:client, got <foo>$/],
          [{ ...base, stanza: "<message xmlns='jabber:server'/>" }, 400, /got <message xmlns='jabber:server'>$/],
          [{ ...base, stanza: "<iq type='get'><ping xmlns='urn:xmpp:ping'/></iq>" }, 400, /^argument 'stanza': an <iq\/> needs an id and a type/],
          [{ ...base, stanza: "<message type='shout'><body>x</body></message>" }, 400, /^argument 'stanza': a <message\/> of type 'shout' does not exist: the types are normal, chat, groupchat, headline, error$/],
          [{ ...base, stanza: "<presence type='online'/>" }, 400, /^argument 'stanza': a <presence\/> of type 'online' does not exist/],
          [{ ...base, to: 'nobody@localhost', stanza: '<message><body>x</body></message>' }, 404, /^account nobody@localhost does not exist$/],
          [{ ...base, to: 'alice@localhost/tablet', stanza: "<iq type='get' id='p'><ping xmlns='urn:xmpp:ping'/></iq>" }, 404, /^alice@localhost has no session with resource 'tablet'$/],
          [{ ...base, from: 'not a jid@', stanza: '<message/>' }, 400, /is not a valid JID/],
        ],
        [laptop],
      );
    });
  });

  describe('send_stanza_c2s', () => {
    it('the session sends a message as its client would: stamped with its full JID', async () => {
      await connect('alice', 'bot', 0);
      const desk = await connect('bob', 'desk', 0);
      const got = next(desk, isMessageWith('from the bot'));
      const stanza = "<message to='bob@localhost/desk' type='chat'><body>from the bot</body><ext xmlns='urn:example:ext' attr='value'/></message>";
      expect(await ok('send_stanza_c2s', { user: 'alice', host: 'localhost', resource: 'bot', stanza })).to.equal(0);
      const message = await got;
      expect(message.attrs).to.deep.include({ from: 'alice@localhost/bot', to: 'bob@localhost/desk', type: 'chat' });
      expect(message.getChild('ext', 'urn:example:ext')).to.not.equal(undefined);
    });

    it('a presence without recipient is the session\'s broadcast presence; an IQ is answered to the session\'s client', async () => {
      const bot = await connect('alice', 'bot');
      const ownPresence = next(bot, (s) => s.is('presence') && s.attrs.from === 'alice@localhost/bot');
      expect(await ok('send_stanza_c2s', { user: 'alice', host: 'localhost', resource: 'bot', stanza: "<presence><show>away</show><status>automated</status></presence>" })).to.equal(0);
      expect((await ownPresence).getChildText('show')).to.equal('away');
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost/bot', show: 'away', status: 'automated' });
      const roster = next(bot, (s) => s.is('iq') && s.attrs.id === 'r1' && s.attrs.type === 'result');
      expect(await ok('send_stanza_c2s', { user: 'alice', host: 'localhost', resource: 'bot', stanza: `<iq type='get' id='r1'><query xmlns='${NS_ROSTER}'/></iq>` })).to.equal(0);
      expect((await roster).getChild('query', NS_ROSTER)).to.not.equal(undefined);
    });

    it('refuses a session that does not exist, bad XML and a foreign from, sending nothing', async () => {
      const bot = await connect('alice', 'bot', 0);
      const desk = await connect('bob', 'desk', 0);
      const base = { user: 'alice', host: 'localhost', resource: 'bot', stanza: "<message to='bob@localhost/desk'><body>x</body></message>" };
      await refusedAll(
        'send_stanza_c2s',
        [
          [{ ...base, resource: 'other' }, 404, /^alice@localhost has no session with resource 'other'$/],
          [{ ...base, user: 'carol' }, 404, /^carol@localhost has no session with resource 'bot'$/],
          [{ ...base, user: 'nobody' }, 404, /^account nobody@localhost does not exist$/],
          [{ ...base, stanza: '<message><body>x</message>' }, 400, /^stanza is not one valid XML element: /],
          [{ ...base, stanza: "<message from='bob@localhost/desk' to='bob@localhost/desk'><body>x</body></message>" }, 400, /^argument 'stanza': the stanza's from must be the session's JID \(alice@localhost\/bot\) or absent, got 'bob@localhost\/desk'$/],
          [{ ...base, stanza: "<message to='a@b@c'><body>x</body></message>" }, 400, /^stanza: 'a@b@c' is not a valid JID/],
          [{ ...base, host: 'elsewhere.org' }, 400, /unknown virtual host 'elsewhere\.org'/],
        ],
        [bot, desk],
      );
      // The stream was not disturbed: the session still sends.
      const got = next(desk, isMessageWith('still here'));
      expect(await ok('send_stanza_c2s', { ...base, stanza: "<message from='alice@localhost/bot' to='bob@localhost/desk'><body>still here</body></message>" })).to.equal(0);
      await got;
    });

    it('a session kept by stream management while its client is away has no stream to send on: 422, and set_presence too', async () => {
      const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
      try {
        await peer.login('alice', 'alice-pw', { resource: 'roaming' });
        peer.write("<enable xmlns='urn:xmpp:sm:3' resume='true'/>");
        await peer.waitFor(/<enabled\b/);
      } finally {
        peer.destroy();
      }
      // The connection is gone, the session stays (detached) for resume_timeout.
      await pause(200);
      expect(await ok('user_resources', { user: 'alice', host: 'localhost' })).to.deep.equal(['roaming']);
      const sent = await api('send_stanza_c2s', { user: 'alice', host: 'localhost', resource: 'roaming', stanza: '<presence/>' });
      expect(sent.status).to.equal(422);
      expect(sent.body.message).to.equal('alice@localhost/roaming has no connection now (stream management keeps it while its client reconnects): nothing was sent');
      const presence = await api('set_presence', { user: 'alice', host: 'localhost', resource: 'roaming', type: 'available', show: '', status: '', priority: 0 });
      expect(presence.status).to.equal(422);
      expect(await ok('get_presence', { user: 'alice', host: 'localhost' })).to.deep.equal({ jid: 'alice@localhost', show: 'unavailable', status: '' });
      expect(await ok('kick_session', { user: 'alice', host: 'localhost', resource: 'roaming', reason: '' })).to.equal(0);
    });
  });

  describe('through servicectl and XML-RPC', () => {
    it('servicectl send_message and send_stanza_c2s', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const got = next(laptop, isMessageWith('from the shell'));
      const res = await servicectl(t.configFile, 'send_message', 'chat', 'admin@localhost', 'alice@localhost', '', 'from the shell');
      expect(res, res.stderr).to.deep.include({ code: 0, stdout: '' });
      expect((await got).attrs.from).to.equal('admin@localhost');
      const bad = await servicectl(t.configFile, 'send_stanza_c2s', 'alice', 'localhost', 'laptop', '<message>');
      expect(bad.code).to.not.equal(0);
      expect(bad.stderr).to.include('stanza is not one valid XML element');
    });

    it('XML-RPC send_stanza in the administrator call form', async () => {
      const laptop = await connect('alice', 'laptop', 0);
      const got = next(laptop, isMessageWith('via xml-rpc'));
      const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
      const member = (name: string, value: string) => `<member><name>${name}</name><value><string>${escape(value)}</string></value></member>`;
      const body =
        '<?xml version="1.0"?><methodCall><methodName>send_stanza</methodName><params>' +
        `<param><value><struct>${member('user', 'admin')}${member('server', 'localhost')}${member('password', 'adminpass')}<member><name>admin</name><value><boolean>1</boolean></value></member></struct></value></param>` +
        `<param><value><struct>${member('from', 'admin@localhost')}${member('to', 'alice@localhost')}${member('stanza', "<message type='chat'><body>via xml-rpc</body></message>")}</struct></value></param>` +
        '</params></methodCall>';
      const res = await request(xmlrpcUrl, { method: 'POST', headers: { 'content-type': 'text/xml' }, body });
      expect(res.text).to.include('<member><name>res</name><value><int>0</int></value></member>');
      expect((await got).attrs).to.deep.include({ from: 'admin@localhost', type: 'chat' });
    });
  });
});

for (const database of testDatabases()) {
  describe(`mod_admin_extra: privacy_set on ${database.name}`, () => {
    let t: TestServer;
    const clients: Client[] = [];
    const api = async (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
    const connect = async (user: string, resource: string) => {
      const c = await login(t, { user, password: `${user}-pw`, resource });
      clients.push(c);
      return c;
    };
    const privacy = (...children: Element[]) => xml('iq', { type: 'get' }, xml('query', { xmlns: NS_PRIVACY }, ...children));
    const blockBob =
      "<query xmlns='jabber:iq:privacy'><list name='no-bob'><item type='jid' value='bob@localhost' action='deny' order='1'><message/></item></list></query>";

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = { ...xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_privacy: {} }), ...serverSqlConfig(settings) };
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    afterEach(async () => {
      await stopAll(...clients.splice(0));
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('stores a list as the account\'s client would, pushing it to the connected resources', async () => {
      const alice = await connect('alice', 'home');
      const push = next(alice, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('query', NS_PRIVACY) !== undefined);
      const res = await api('privacy_set', { user: 'alice', host: 'localhost', xmlquery: blockBob });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.equal(0);
      expect((await push).getChild('query', NS_PRIVACY)!.getChild('list')!.attrs.name).to.equal('no-bob');
      const stored = await alice.iqCaller.request(privacy(xml('list', { name: 'no-bob' })));
      const item = stored.getChild('query', NS_PRIVACY)!.getChild('list')!.getChild('item')!;
      expect(item.attrs).to.deep.equal({ type: 'jid', value: 'bob@localhost', action: 'deny', order: '1' });
    });

    it('sets the default list, which then keeps the denied sender out', async () => {
      await api('privacy_set', { user: 'alice', host: 'localhost', xmlquery: blockBob });
      const res = await api('privacy_set', { user: 'alice', host: 'localhost', xmlquery: "<query xmlns='jabber:iq:privacy'><default name='no-bob'/></query>" });
      expect(res.status, res.text).to.equal(200);
      const alice = await connect('alice', 'home');
      await available(alice);
      const bob = await connect('bob', 'desk');
      const carol = await connect('carol', 'desk');
      const atAlice = expectSilence(alice, isMessageWith('from bob'), "a denied sender's message");
      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, 'from bob')));
      expect((await bounced).getChild('error')!.getChild('service-unavailable')).to.not.equal(undefined);
      await atAlice.proveWith(() => carol.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, 'from carol'))), isMessageWith('from carol'));
      const names = await alice.iqCaller.request(privacy());
      expect(names.getChild('query', NS_PRIVACY)!.getChild('default')!.attrs.name).to.equal('no-bob');
    });

    it('changes and declines the default list while the user is online, as ejabberd does, with effect at once', async () => {
      await api('privacy_set', { user: 'alice', host: 'localhost', xmlquery: blockBob });
      const allowAll = "<query xmlns='jabber:iq:privacy'><list name='open'><item action='allow' order='1'/></list></query>";
      expect((await api('privacy_set', { user: 'alice', host: 'localhost', xmlquery: allowAll })).status).to.equal(200);
      const alice = await connect('alice', 'home');
      await available(alice);
      const bob = await connect('bob', 'desk');
      const setDefault = (name?: string) =>
        api('privacy_set', { user: 'alice', host: 'localhost', xmlquery: `<query xmlns='jabber:iq:privacy'><default${name ? ` name='${name}'` : ''}/></query>` });
      for (const name of ['open', 'no-bob']) {
        const res = await setDefault(name);
        expect(res.status, res.text).to.equal(200);
      }
      const bounced = next(bob, (s) => s.is('message') && s.attrs.type === 'error');
      await bob.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, 'while blocked')));
      expect((await bounced).getChild('error')!.getChild('service-unavailable')).to.not.equal(undefined);
      expect((await setDefault()).status).to.equal(200);
      const arrived = next(alice, isMessageWith('after decline'));
      await bob.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, 'after decline')));
      await arrived;
      const names = await alice.iqCaller.request(privacy());
      expect(names.getChild('query', NS_PRIVACY)!.getChild('default')).to.equal(undefined);
    });

    it('refuses what is not a privacy query, what XEP-0016 refuses, and unknown accounts, changing nothing', async () => {
      const before = await api('privacy_set', { user: 'carol', host: 'localhost', xmlquery: "<query xmlns='jabber:iq:privacy'><list name='keep'><item action='allow' order='1'/></list></query>" });
      expect(before.status).to.equal(200);
      const cases: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ xmlquery: '<query xmlns="jabber:iq:privacy"><list name="x">' }, 400, /^xmlquery is not one valid XML element: /],
        [{ xmlquery: "<query xmlns='jabber:iq:roster'/>" }, 400, /^xmlquery must be a <query xmlns='jabber:iq:privacy'\/>, got <query xmlns='jabber:iq:roster'>$/],
        [{ xmlquery: "<query xmlns='jabber:iq:privacy'><active name='keep'/></query>" }, 400, /^xmlquery was refused \(bad-request\): an active list belongs to a session$/],
        [{ xmlquery: "<query xmlns='jabber:iq:privacy'><list name='x'><item action='maybe' order='1'/></list></query>" }, 400, /^xmlquery was refused \(bad-request\): /],
        [{ xmlquery: "<query xmlns='jabber:iq:privacy'><default name='nope'/></query>" }, 404, /^there is no list 'nope'$/],
        [{ xmlquery: "<query xmlns='jabber:iq:privacy'><list name='nope'/></query>" }, 404, /^there is no list 'nope'$/],
        [{ user: 'nobody', xmlquery: blockBob }, 404, /^account nobody@localhost does not exist$/],
        [{ host: 'elsewhere.org', xmlquery: blockBob }, 400, /unknown virtual host/],
      ];
      for (const [change, status, message] of cases) {
        const res = await api('privacy_set', { user: 'carol', host: 'localhost', ...change });
        expect(res.status, JSON.stringify(change)).to.equal(status);
        expect(res.body.message, JSON.stringify(change)).to.match(message);
      }
      const carol = await connect('carol', 'check');
      const names = await carol.iqCaller.request(privacy());
      const query = names.getChild('query', NS_PRIVACY)!;
      expect(query.getChildren('list').map((l) => l.attrs.name)).to.deep.equal(['keep']);
      expect(query.getChild('default')).to.equal(undefined);
    });
  });
}

describe('mod_admin_extra: privacy_set without mod_privacy', () => {
  let t: TestServer;
  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_admin_extra: {} }));
    await t.bootstrapAdmin();
  });
  after(() => t.stop());

  it('fails with 422 naming the module to enable', async () => {
    const res = await t.api('privacy_set', { user: 'admin', host: 'localhost', xmlquery: "<query xmlns='jabber:iq:privacy'><default/></query>" }, { basic: ADMIN });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.equal('privacy_set needs mod_privacy, which is not enabled: add it to modules');
  });
});
