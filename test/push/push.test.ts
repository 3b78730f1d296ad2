/**
 * Push notifications (mod_push, XEP-0357) on each database, end to end over real sockets: a phone enables
 * push with the test's own app server (a client of the same server answering pubsub publishes), its
 * connection is cut while stream management keeps its session, and a message for it reaches the app server
 * as a XEP-0357 §5 publish revealing nothing by default, the sender and body when configured; an offline
 * account is notified when its message is stored; disable stops notifications; an app server's error
 * disables the push session (not a `wait`); bad requests are refused with their stanza errors; removing
 * the account and delete_old_push_sessions remove push sessions.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { expectSilence, login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { APP_SERVER, AppServer, NS_PUBSUB, NS_PUSH, cut, detached, disable, enable, publishForm, refusal, smEnabled, summaryOf, until } from './helpers.js';

const ADMIN = 'admin@localhost:adminpass';
const DAY = 86_400_000;
const CHAT_STATE = 'http://jabber.org/protocol/chatstates';

for (const database of testDatabases()) {
  describe(`push notifications on ${database.name} (mod_push)`, function () {
    this.timeout(90_000);
    let t: TestServer;
    let sql: RawConfig;
    let app: AppServer;
    let juliet: Client;

    const config = (push: Record<string, unknown>) => ({
      ...xmppConfig({ mod_offline: {}, mod_stream_mgmt: { resume_timeout: 60, max_resume_timeout: 60 }, mod_disco: {}, mod_roster: {}, mod_admin_extra: {}, mod_push: push }),
      ...sql,
    });
    /** Applies new mod_push options (reload_config restarts the module with them). */
    const pushOptions = async (push: Record<string, unknown>) => {
      await t.writeConfig(config(push));
      const res = await t.api('reload_config', {}, { basic: ADMIN });
      expect(res.status, res.text).to.equal(200);
    };
    const rows = (user: string) => t.server.services.storage.db()('push_sessions').where({ username: user, host: 'localhost' }).orderBy('node');
    const say = (to: string, body: string) => juliet.send(xml('message', { to, type: 'chat' }, xml('body', {}, body)));

    /** A phone of `user` that enabled push for `node`, whose connection is then cut: its session waits, detached. */
    const detachedPhone = async (user: string, node: string, form?: ReturnType<typeof publishForm>, resource = 'phone', appServer = APP_SERVER) => {
      const phone = await login(t, { user, password: `${user}-pw`, resource });
      await smEnabled(phone);
      await phone.send(xml('presence'));
      await enable(phone, node, form, appServer);
      cut(phone);
      await detached(t, `${user}@localhost/${resource}`);
      return phone;
    };

    before(async () => {
      sql = serverSqlConfig(await database.settings('/tmp'));
      t = await TestServer.start(config({}));
      await t.bootstrapAdmin();
      for (const user of ['romeo', 'juliet', 'appserver', 'mercutio', 'tybalt', 'benvolio', 'leaving', 'paris', 'friar']) {
        await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      }
      app = await AppServer.start(t);
      juliet = await login(t, { user: 'juliet', password: 'juliet-pw', resource: 'balcony' });
    });
    after(async () => {
      await stopAll(juliet, app?.client);
      await t?.stop();
      await database.cleanup();
    });

    it("is announced on the account's disco#info", async () => {
      const info = await juliet.iqCaller.request(xml('iq', { type: 'get', to: 'juliet@localhost' }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
      expect(info.getChild('query')!.getChildren('feature').map((f) => f.attrs.var)).to.include(NS_PUSH);
    });

    it('notifies the app server of a message for a detached session, revealing nothing by default, with the publish options', async () => {
      const phone = await detachedPhone('romeo', 'romeo-node', publishForm({ secret: 'sesame' }));
      try {
        const [row] = await rows('romeo');
        expect(row).to.include({ service: APP_SERVER, node: 'romeo-node' });
        const published = app.publish('romeo-node');
        await say('romeo@localhost', 'wherefore art thou');
        const iq = await published;
        // XEP-0357 §5: from the account, a publish of one item holding the notification.
        expect(iq.attrs.from).to.equal('romeo@localhost');
        expect(summaryOf(iq)).to.deep.equal({ FORM_TYPE: 'urn:xmpp:push:summary' });
        expect(iq.toString()).to.not.include('wherefore').and.not.include('juliet');
        const options = iq.getChild('pubsub', NS_PUBSUB)!.getChild('publish-options')!.getChild('x', 'jabber:x:data')!;
        expect(options.getChildren('field').find((f) => f.attrs.var === 'secret')?.getChildText('value')).to.equal('sesame');
      } finally {
        await stopAll(phone);
      }
    });

    it('notifies once when a session is detached with a message it never acknowledged', async () => {
      // A raw client: it acknowledges nothing, so the message written to it before the loss stays unacknowledged.
      const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
      try {
        await peer.login('romeo', 'romeo-pw', { resource: 'raw' });
        peer.write("<enable xmlns='urn:xmpp:sm:3' resume='true'/>");
        await peer.waitFor(/<enabled\b/);
        peer.write(`<iq type='set' id='push1'><enable xmlns='${NS_PUSH}' jid='${APP_SERVER}' node='romeo-raw'/></iq>`);
        await peer.waitFor(/<iq\b[^>]*id=['"]push1['"][^>]*type=['"]result['"]|<iq\b[^>]*type=['"]result['"][^>]*id=['"]push1['"]/);
        peer.write('<presence/>');
        const silence = expectSilence(app.client, (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === 'romeo-raw', 'a notification for a connected session');
        await say('romeo@localhost/raw', 'did my heart love till now?');
        await peer.waitFor(/did my heart love till now/);
        // While connected, nothing is sent: the probe is a notification of another push session.
        await silence.proveWith(
          async () => {
            const friar = await login(t, { user: 'friar', password: 'friar-pw', resource: 'cell' });
            await enable(friar, 'friar-probe');
            await friar.stop();
            await say('friar@localhost', 'probe');
          },
          (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === 'friar-probe',
        );
        await pushOptions({ include_body: true });
        const published = app.publish('romeo-raw');
        peer.destroy();
        await detached(t, 'romeo@localhost/raw');
        expect(summaryOf(await published)['last-message-body']).to.equal('did my heart love till now?');
        const once = expectSilence(app.client, (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === 'romeo-raw', 'a second notification');
        await once.proveWith(
          () => say('friar@localhost', 'probe'),
          (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === 'friar-probe',
        );
      } finally {
        peer.destroy();
        await pushOptions({});
      }
    });

    it('names the sender and carries the body when configured, or a fixed text; chat states wake nobody', async () => {
      await pushOptions({ include_sender: true, include_body: true });
      try {
        const phone = await detachedPhone('paris', 'paris-node');
        try {
          const published = app.publish('paris-node');
          await say('paris@localhost/phone', 'a rose by any other name');
          expect(summaryOf(await published)).to.deep.equal({
            FORM_TYPE: 'urn:xmpp:push:summary',
            'last-message-sender': 'juliet@localhost/balcony',
            'last-message-body': 'a rose by any other name',
          });

          await pushOptions({ include_sender: false, include_body: 'New message' });
          const silence = expectSilence(app.client, (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB) !== undefined, 'notifications of a chat state');
          await juliet.send(xml('message', { to: 'paris@localhost/phone', type: 'chat' }, xml('composing', { xmlns: CHAT_STATE })));
          const probe = await silence.proveWith(
            () => say('paris@localhost/phone', 'parting is such sweet sorrow'),
            (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB) !== undefined,
          );
          expect(summaryOf(probe)).to.deep.equal({ FORM_TYPE: 'urn:xmpp:push:summary', 'last-message-body': 'New message' });
        } finally {
          await stopAll(phone);
        }
      } finally {
        await pushOptions({});
      }
    });

    it('notifies every push session of an account with no session when its message is stored offline', async () => {
      const phone = await login(t, { user: 'mercutio', password: 'mercutio-pw', resource: 'phone' });
      await enable(phone, 'mercutio-1');
      await enable(phone, 'mercutio-2');
      // Enabling the same node again renews it: still one row per node.
      await enable(phone, 'mercutio-2', publishForm({ secret: 'renewed' }));
      expect((await rows('mercutio')).map((r: any) => r.node)).to.deep.equal(['mercutio-1', 'mercutio-2']);
      await phone.stop();
      const first = app.publish('mercutio-1');
      const second = app.publish('mercutio-2');
      await say('mercutio@localhost', 'a plague on both your houses');
      expect((await first).attrs.from).to.equal('mercutio@localhost');
      const renewed = (await second).getChild('pubsub', NS_PUBSUB)!.getChild('publish-options')!;
      expect(renewed.toString()).to.include('renewed');
    });

    it('disable stops notifications: one node, then every node of the app server; an unknown one is item-not-found', async () => {
      const phone = await login(t, { user: 'benvolio', password: 'benvolio-pw', resource: 'phone' });
      try {
        await enable(phone, 'ben-1');
        await enable(phone, 'ben-2');
        await enable(phone, 'ben-3');
        await disable(phone, 'ben-1');
        expect((await rows('benvolio')).map((r: any) => r.node)).to.deep.equal(['ben-2', 'ben-3']);
        expect(await refusal(disable(phone, 'ben-1'))).to.equal('item-not-found');
        expect(await refusal(disable(phone, undefined, 'other@localhost/push'))).to.equal('item-not-found');
        await disable(phone);
        expect(await rows('benvolio')).to.have.length(0);
        expect(await refusal(disable(phone))).to.equal('item-not-found');
        await enable(phone, 'ben-4');
      } finally {
        await stopAll(phone);
      }
      // Only ben-4 is notified of the offline message: the disabled nodes are not.
      const silence = expectSilence(app.client, (s) => s.is('iq') && /^ben-[123]$/.test(s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node ?? ''), 'notifications of disabled nodes');
      await silence.proveWith(
        () => say('benvolio@localhost', 'part, fools'),
        (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === 'ben-4',
      );
    });

    it("an app server's error disables the push session, one of type wait does not", async () => {
      const phone = await login(t, { user: 'tybalt', password: 'tybalt-pw', resource: 'phone' });
      await enable(phone, 'tybalt-node');
      await phone.stop();
      try {
        app.answer = { type: 'wait', condition: 'resource-constraint' };
        let published = app.publish('tybalt-node');
        await say('tybalt@localhost', 'what, drawn, and talk of peace?');
        await published;
        const refusedForNow = () => t.logs.some((l) => l.msg === 'the app server refused a push notification for now' && l.account === 'tybalt@localhost');
        await until(async () => refusedForNow(), 'the wait answer to be handled');
        expect(await rows('tybalt'), 'a wait keeps the push session').to.have.length(1);
        published = app.publish('tybalt-node');
        app.answer = { type: 'cancel', condition: 'item-not-found' };
        await say('tybalt@localhost', 'I hate the word');
        await published;
        await until(async () => (await rows('tybalt')).length === 0, 'the push session to be disabled');
      } finally {
        app.answer = 'result';
      }
      const silence = expectSilence(app.client, (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === 'tybalt-node', 'notifications to a disabled push session');
      const probe = await login(t, { user: 'tybalt', password: 'tybalt-pw', resource: 'probe' });
      try {
        await enable(probe, 'tybalt-probe');
        await probe.stop();
        await silence.proveWith(
          () => say('tybalt@localhost', 'as I hate hell'),
          (s) => s.is('iq') && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === 'tybalt-probe',
        );
      } finally {
        await stopAll(probe);
      }
    });

    it('an app server that is not connected counts as its error (service-unavailable): the push session is disabled', async () => {
      // The server answers for the missing resource, to the account's sessions; no client of it sees that answer.
      const phone = await detachedPhone('romeo', 'romeo-gone', undefined, 'second', 'appserver@localhost/nobody');
      const desk = await login(t, { user: 'romeo', password: 'romeo-pw', resource: 'desk' });
      try {
        expect((await rows('romeo')).map((r: any) => r.node)).to.include('romeo-gone');
        const silence = expectSilence(desk, (s) => s.is('iq'), "the answer to the server's own notification");
        await say('romeo@localhost/second', 'is anybody there?');
        await until(async () => !(await rows('romeo')).some((r: any) => r.node === 'romeo-gone'), 'the push session to be disabled');
        await silence.proveWith(
          () => say('romeo@localhost/desk', 'probe'),
          (s) => s.is('message') && s.getChildText('body') === 'probe',
        );
      } finally {
        await stopAll(phone, desk);
      }
    });

    it('refuses bad requests with their stanza errors, and stores nothing', async () => {
      const phone = await login(t, { user: 'leaving', password: 'leaving-pw', resource: 'phone' });
      try {
        const raw = (payload: ReturnType<typeof xml>, to?: string) => phone.iqCaller.request(xml('iq', { type: 'set', ...(to ? { to } : {}) }, payload));
        expect(await refusal(raw(xml('enable', { xmlns: NS_PUSH, node: 'n' }))), 'no jid').to.equal('bad-request');
        expect(await refusal(raw(xml('enable', { xmlns: NS_PUSH, jid: 'a@b@c', node: 'n' }))), 'invalid jid').to.equal('bad-request');
        expect(await refusal(raw(xml('enable', { xmlns: NS_PUSH, jid: APP_SERVER }))), 'no node').to.equal('bad-request');
        expect(await refusal(enable(phone, 'n', publishForm({}, undefined, 'form'))), 'a form that is not submitted').to.equal('bad-request');
        expect(await refusal(enable(phone, 'n', publishForm({}, 'urn:example:other'))), 'another FORM_TYPE').to.equal('not-acceptable');
        expect(await refusal(enable(phone, 'n', undefined, `${'a'.repeat(150)}@${'b'.repeat(60)}.example`)), 'a JID too long to store').to.equal('not-acceptable');
        expect(await refusal(enable(phone, 'n', undefined, APP_SERVER, 'juliet@localhost')), "another account's push").to.equal('forbidden');
        expect(await refusal(raw(xml('disable', { xmlns: NS_PUSH }))), 'disable without jid').to.equal('bad-request');
        expect(await refusal(disable(phone, 'never-enabled'))).to.equal('item-not-found');
        expect(await rows('leaving')).to.have.length(0);
      } finally {
        await stopAll(phone);
      }
    });

    it('removing the account removes its push sessions', async () => {
      const phone = await login(t, { user: 'leaving', password: 'leaving-pw', resource: 'phone' });
      await enable(phone, 'leaving-node');
      await stopAll(phone);
      expect(await rows('leaving')).to.have.length(1);
      const res = await t.api('unregister', { user: 'leaving', host: 'localhost' }, { basic: ADMIN });
      expect(res.status, res.text).to.equal(200);
      expect(await rows('leaving')).to.have.length(0);
    });

    it('delete_old_push_sessions removes those not enabled again for DAYS days; 0 removes all; a negative count is refused', async () => {
      const db = t.server.services.storage.db();
      const row = (user: string, node: string, ageDays: number) => ({
        host: 'localhost', username: user, service: APP_SERVER, node, node_hash: `${user}-${node}`.padEnd(64, '0'), session_id: 's', publish_options: '', enabled_at: Date.now() - ageDays * DAY,
      });
      await db('push_sessions').insert([row('old1', 'a', 40), row('old2', 'b', 31), row('fresh', 'c', 2)]);
      const count = async () => Number((await db('push_sessions').whereIn('username', ['old1', 'old2', 'fresh']).count({ n: '*' }))[0]!.n);
      const call = (days: number) => t.api('delete_old_push_sessions', { days }, { basic: ADMIN });
      const refused = await call(-1);
      expect(refused.status).to.equal(400);
      expect(refused.text).to.contain('days');
      expect(await count()).to.equal(3);
      const res = await call(30);
      expect(res.status, res.text).to.equal(200);
      expect(JSON.parse(res.text)).to.equal(0);
      expect(await count()).to.equal(1);
      expect((await call(0)).status).to.equal(200);
      expect(await db('push_sessions').count({ n: '*' }).then((r: any) => Number(r[0].n))).to.equal(0);
    });
  });
}
