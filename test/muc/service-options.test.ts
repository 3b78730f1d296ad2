/**
 * mod_muc's service options with a real server: the service domains (`host`, `hosts`, @HOST@), who may
 * create rooms (access_create), service administrators (access_admin) being owners everywhere, and
 * default_room_options checked like the rest of the configuration (a bad name or value names itself).
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { next, stopAll, xml } from '../support/xmpp.js';
import { NS_MUC_ADMIN, codes, errorCondition, item, join, mucConfig, user } from './helpers.js';

describe('MUC service options (mod_muc)', () => {
  it('refuses default_room_options with an unknown name or a bad value, naming it', async () => {
    const unknown = await TestServer.start(mucConfig({ default_room_options: { members_onyl: true } })).then(
      async (t) => {
        await t.stop();
        return undefined;
      },
      (err: Error) => err.message,
    );
    expect(unknown).to.match(/default_room_options/).and.to.match(/members_onyl/);
    const bad = await TestServer.start(mucConfig({ default_room_options: { max_users: 'lots' } })).then(
      async (t) => {
        await t.stop();
        return undefined;
      },
      (err: Error) => err.message,
    );
    expect(bad).to.match(/default_room_options\.max_users/);
  });

  describe('with hosts, access_create and access_admin', () => {
    let t: TestServer;

    before(async () => {
      t = await TestServer.start(
        mucConfig(
          { hosts: ['muc.@HOST@', 'rooms.@HOST@'], access_create: 'creators', access_admin: 'muc_admins', default_room_options: { title: 'Default title', members_by_default: false } },
          {
            acl: { admin: { user: 'admin@localhost' }, loopback: { ip: ['127.0.0.0/8'] }, creators: { user: ['alice@localhost', 'boss@localhost'] }, muc_admins: { user: 'boss@localhost' } },
            access_rules: { creators: { allow: 'creators' }, muc_admins: { allow: 'muc_admins' } },
          },
        ),
      );
      await t.bootstrapAdmin();
      for (const name of ['alice', 'bob', 'boss']) await t.server.services.accounts.register(name, 'localhost', `${name}-pw`);
    });
    after(async () => {
      await t.stop();
    });

    it('serves every pattern for every virtual host, lets only creators create, and makes service admins owners', async () => {
      const alice = await user(t, 'alice');
      const bob = await user(t, 'bob');
      const boss = await user(t, 'boss');
      try {
        for (const service of ['muc.localhost', 'rooms.example.com']) {
          const info = await bob.iqCaller.request(xml('iq', { type: 'get', to: service }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
          expect(info.getChild('query')!.getChild('identity')!.attrs.category).to.equal('conference');
        }
        const refused = await join(bob, 'bobs', 'Bob', { service: 'muc.localhost' });
        expect(errorCondition(refused)).to.equal('not-allowed');
        const created = await join(alice, 'place', 'Alice', { service: 'muc.localhost' });
        expect(codes(created)).to.include(201);
        await alice.iqCaller.request(xml('iq', { type: 'set', to: 'place@muc.localhost' }, xml('query', { xmlns: 'http://jabber.org/protocol/muc#owner' }, xml('x', { xmlns: 'jabber:x:data', type: 'submit' }))));
        const info = await bob.iqCaller.request(xml('iq', { type: 'get', to: 'place@muc.localhost' }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
        expect(info.getChild('query')!.getChild('identity')!.attrs.name).to.equal('Default title');
        const bobIn = await join(bob, 'place', 'Bob', { service: 'muc.localhost' });
        expect(item(bobIn).role).to.equal('visitor');
        const bossIn = await join(boss, 'place', 'Boss', { service: 'muc.localhost' });
        expect(item(bossIn)).to.include({ affiliation: 'owner', role: 'moderator' });
        // The service admin may ban though the room's owner never made it anything.
        const banned = next(bob, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === 'place@muc.localhost/Bob');
        await boss.iqCaller.request(xml('iq', { type: 'set', to: 'place@muc.localhost' }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { jid: 'bob@localhost', affiliation: 'outcast' }))));
        expect(codes(await banned)).to.include(301);
      } finally {
        await stopAll(alice, bob, boss);
      }
    });
  });
});

